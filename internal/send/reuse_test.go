package send

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/stream"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestServerClosesAfterEachStream: a server that closes the connection
// after every streamed response while advertising Keep-Alive (llama.cpp)
// makes requests fail on a reused connection before any response byte;
// those never reached the server and are retried once on a fresh
// connection, so at concurrency 32 nothing fails and the server sees each
// request exactly once (issue 11 item 2).
func TestServerClosesAfterEachStream(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, CloseAfterStream: true})
	const n = 2000
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(64, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 32, Requests: n, Recycle: true, Timeout: time.Minute}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 || sum.Requests != n || s.Requests() != n {
		t.Errorf("%d of %d failed (%s); server saw %d requests", sum.Failed, sum.Requests, sum.FailedKinds(), s.Requests())
	}
}

// TestStreamKeepsConnection: a stream whose chunked body ends a moment
// after its [DONE] (the server's handler returns later) still hands its
// connection back: send reads the body to its end before closing it, so 5
// requests one after the other use one connection. (Closed at [DONE], each
// would be dropped and the next dialled again.)
func TestStreamKeepsConnection(t *testing.T) {
	defer func(d time.Duration) { drainWait = d }(drainWait)
	drainWait = time.Minute // the test's server ends each body 2 ms after [DONE]
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`+"\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(5, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: srv.URL, Concurrency: 1, Timeout: time.Minute}, Wiring{})
	if err != nil || sum.Failed != 0 || sum.Requests != 5 {
		t.Fatalf("%+v %v", sum, err)
	}
	// One for the reachability check, one for the five requests.
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections for 5 requests one after the other, want 1 (and 1 for the reachability check)", n)
	}
}

// TestResetAfterBodyNotResent: a server that reads each request whole and
// then resets the connection (SO_LINGER 0) sees each request exactly once,
// and the run reports every one as failed, of kind reset (issue 27 item
// 2: send resent those on a reused connection, and reported "6 succeeded,
// 0 failed" while the server saw 11 requests and reset 5). A raw loopback
// server: every other request on a connection is answered, the rest reset.
func TestResetAfterBodyNotResent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var seen, resets atomic.Int64
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					seen.Add(1)
					if i%2 == 1 {
						resets.Add(1)
						nc.(*net.TCPConn).SetLinger(0)
						return
					}
					io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 97\r\n\r\n"+
						`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"completion_tokens":1}}`)
				}
			}()
		}
	}()
	const n = 11
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(n, 1), newBuilder(t, PayloadOptions{Stream: false}),
		Config{URL: "http://" + ln.Addr().String(), Concurrency: 1, Timeout: time.Minute}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	recs := liveRecords(t, &out)
	reset := 0
	for _, r := range recs {
		if r.Result.Retried {
			t.Errorf("%s retried", r.ConversationID)
		}
		if !r.Result.OK && r.Result.Error.Kind == records.ErrReset {
			reset++
		}
	}
	if seen.Load() != n || len(recs) != n || sum.Requests != n {
		t.Errorf("server saw %d requests, %d records, summary %d; want %d each", seen.Load(), len(recs), sum.Requests, n)
	}
	if int64(reset) != resets.Load() || sum.Failed != reset || sum.ByKind[records.ErrReset] != reset {
		t.Errorf("%d records of kind reset, summary %d failed (%s); the server reset %d", reset, sum.Failed, sum.FailedKinds(), resets.Load())
	}
}

// TestStreamsWithoutDone: against a server that ends each stream after its
// usage chunk without data: [DONE] and closes the connection, every
// request succeeds, noted (issue 27 item 12: each was recorded as
// truncated), and the server sees each once.
func TestStreamsWithoutDone(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, NoDone: true})
	const n = 40
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(n, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 4, Timeout: time.Minute}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 || sum.Requests != n || s.Requests() != n {
		t.Fatalf("%d of %d failed (%s); server saw %d", sum.Failed, sum.Requests, sum.FailedKinds(), s.Requests())
	}
	for i, r := range liveRecords(t, &out) {
		if !r.Result.OK || r.Result.Note != stream.NoteNoDone || r.Result.Usage == nil {
			t.Fatalf("%+v: want ok, noted, with usage", r.Result)
		}
		if i == 0 {
			testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
		}
	}
}
