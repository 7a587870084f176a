package stream

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/islkit/islkit/internal/records"
)

func TestReadStream(t *testing.T) {
	in := ": keep-alive\r\n\r\n" +
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n" +
		"event: message\ndata:{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n" +
		"data: {\"choices\":[{\"delta\":\n" + "data: {\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15," +
		"\"prompt_tokens_details\":{\"cached_tokens\":8},\"completion_tokens_details\":{\"reasoning_tokens\":1}}}\n\n" +
		"data: [DONE]\n\n"
	var res records.Result
	if err := ReadChat(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	if res.OutputText != "Hello" || res.Reasoning != "think" || res.FinishReason != "stop" || res.Chunks != 5 ||
		res.TTFTNs == nil || len(res.ITLNs) != 2 || u == nil || u.PromptTokens == nil || *u.PromptTokens != 12 || u.CompletionTokens != 3 ||
		*u.CachedTokens != 8 || *u.ReasoningTokens != 1 {
		t.Errorf("%+v usage %+v", res, u)
	}
	for name, bad := range map[string]string{
		"no DONE":    "data: {\"choices\":[]}\n\n",
		"mid-event":  "data: {\"choices\":[]}\n\ndata: {\"cho",
		"empty body": "",
	} {
		var res records.Result
		if err := ReadChat(strings.NewReader(bad), time.Now(), &res); !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var pe *ProtocolError
	var res2 records.Result
	if err := ReadChat(strings.NewReader("data: nope\n\n"), time.Now(), &res2); !errors.As(err, &pe) {
		t.Errorf("bad JSON: %v", err)
	}
	var se *ServerError
	for _, bad := range []string{"data: {\"error\":{\"message\":\"boom\"}}\n\n", "data: {\"error\":\"boom\"}\n\n"} {
		var res records.Result
		if err := ReadChat(strings.NewReader(bad), time.Now(), &res); !errors.As(err, &se) || se.Message != "boom" {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestStreamWithoutDone: a stream that carried its finish_reason and its
// usage and then ended without data: [DONE] is complete: a success, with
// result.note saying so (issue 27 item 12: it was recorded as truncated).
// Without either, or cut inside an event, it is still truncated; a body
// cut by the connection (io.ErrUnexpectedEOF from the chunked reader)
// after a whole event counts as its end.
func TestStreamWithoutDone(t *testing.T) {
	finish := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
	usage := "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1,\"total_tokens\":8}}\n\n"
	for name, tc := range map[string]struct {
		in       string
		cut      bool // the body ends in io.ErrUnexpectedEOF
		complete bool
	}{
		"finish and usage":           {finish + usage, false, true},
		"finish and usage, cut body": {finish + usage, true, true},
		"no usage":                   {finish, false, false},
		"no finish":                  {"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" + usage, false, false},
		"last event cut":             {finish + strings.TrimSuffix(usage, "\n"), false, false},
	} {
		var r io.Reader = strings.NewReader(tc.in)
		if tc.cut {
			r = io.MultiReader(r, iotest.ErrReader(io.ErrUnexpectedEOF))
		}
		var res records.Result
		err := ReadChat(r, time.Now(), &res)
		switch {
		case tc.complete && (err != nil || res.Note != NoteNoDone || res.OutputText != "hi" || res.FinishReason != "length"):
			t.Errorf("%s: %v, note %q, %+v; want complete, noted", name, err, res.Note, res)
		case !tc.complete && !errors.Is(err, ErrTruncated):
			t.Errorf("%s: %v, want truncated", name, err)
		}
	}
}

func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"message\":{\"content\":null}}],\"usage\":{\"prompt_tokens\":1}}\r\n\r\n"))
	f.Add([]byte(":\n\ndata\ndata:\n\n\r"))
	f.Add([]byte("data: {\"error\":{\"message\":\"m\",\"type\":\"t\",\"code\":500}}\n\ndata: {\"error\":\"s\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res records.Result
		err := ReadChat(strings.NewReader(string(data)), time.Now(), &res)
		if err == nil && !strings.Contains(string(data), "[DONE]") {
			t.Errorf("success without [DONE]")
		}
		if res.TTFTNs == nil && len(res.ITLNs) > 0 {
			t.Errorf("ITL without TTFT")
		}
		var r2 records.Result
		_ = ReadChatJSON(data, time.Now(), time.Now(), &r2)
	})
}
