package send

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/endpoint"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/version"
)

// TestServerErrorInStream: a `data: {"error": ...}` event inside a 200
// stream (vLLM and llama.cpp send one when generation fails) is the
// server's error, with its code and type kept, not a protocol error
// (issue 11 item 3). The same error in a 200 JSON body, and an HTTP error
// body's code and type, are kept too.
func TestServerErrorInStream(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		status                  int
		want                    records.RequestError
	}{
		{"sse", "text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
			"data: {\"error\":{\"object\":\"error\",\"message\":\"boom\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}\n\n",
			200, records.RequestError{Kind: records.ErrServer, Message: "boom", Code: "500", Type: "InternalServerError"}},
		{"sse string code", "text/event-stream", "data: {\"error\":{\"message\":\"too long\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n\n",
			200, records.RequestError{Kind: records.ErrServer, Message: "too long", Code: "context_length_exceeded", Type: "invalid_request_error"}},
		{"json", "application/json", `{"error":{"message":"bad","type":"server_error","code":503}}`,
			200, records.RequestError{Kind: records.ErrServer, Message: "bad", Code: "503", Type: "server_error"}},
		{"http 500", "application/json", `{"error":{"message":"down","type":"internal_server_error","code":500}}`,
			500, records.RequestError{Kind: records.ErrHTTP5xx, Message: "500 Internal Server Error", Code: "500", Type: "internal_server_error"}},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", tc.contentType)
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		res := mustClient(t, srv.URL, nil).do(context.Background(), time.Minute, []byte(`{}`))
		srv.Close()
		e := res.Error
		if res.OK || e == nil || e.Kind != tc.want.Kind || !strings.Contains(e.Message, tc.want.Message) ||
			e.Code != tc.want.Code || e.Type != tc.want.Type {
			t.Errorf("%s: error %+v, want %+v", tc.name, e, tc.want)
		}
	}
}

// TestUserAgent: requests say who sent them, islkit-send/<version>
// (issue 11 item 20); a -H User-Agent still wins.
func TestUserAgent(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("User-Agent"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"x"}}]}`)
	}))
	defer srv.Close()
	mustClient(t, srv.URL, nil).do(context.Background(), time.Minute, []byte(`{}`))
	mustClient(t, srv.URL, http.Header{"User-Agent": {"mine"}}).do(context.Background(), time.Minute, []byte(`{}`))
	if want := "islkit-send/" + version.String(); len(got) != 2 || got[0] != want || got[1] != "mine" {
		t.Errorf("User-Agent %q, want %q then the -H one", got, want)
	}
}

func mustClient(t *testing.T, url string, extra http.Header) *client {
	t.Helper()
	cl, err := newClient(endpoint.Chat, url, "", extra, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.closeIdle)
	return cl
}

// TestAnswerMessages: answers send cannot use are named for what they
// are (issue 27 item 18): a non-streamed body over the size limit (it
// was "unexpected end of JSON input"), a compressed answer send did not
// ask for (send asks for Accept-Encoding: identity; a gzip stream was
// "truncated after 0 chunks"), and a redirect with its Location.
func TestAnswerMessages(t *testing.T) {
	defer func(n int) { maxBody = n }(maxBody)
	maxBody = 1 << 10
	var encodings []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		encodings = append(encodings, r.Header.Get("Accept-Encoding"))
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"`+strings.Repeat("x", 2<<10)+`"}}]}`)
		case "/gzip":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8b\x08\x00\x00\x00\x00\x00")
		case "/moved":
			w.Header().Set("Location", "https://example.test/v1/chat/completions")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/big":   "the response body exceeded send's limit of 1024 bytes for a non-streamed answer",
		"/gzip":  "the server compressed its answer (Content-Encoding: gzip) although send asked for Accept-Encoding: identity",
		"/moved": "307 Temporary Redirect, Location: https://example.test/v1/chat/completions (send does not follow redirects",
	} {
		res := mustClient(t, srv.URL+path, nil).do(context.Background(), time.Minute, []byte(`{}`))
		if res.OK || res.Error == nil || res.Error.Kind != records.ErrProtocol || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: %+v, want a protocol error saying %q", path, res.Error, want)
		}
	}
	for _, e := range encodings {
		if e != "identity" {
			t.Errorf("Accept-Encoding %q, want identity", e)
		}
	}
}
