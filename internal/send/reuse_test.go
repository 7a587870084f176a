package send

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/testserver"
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
		LiveOptions{URL: s.URL(), Concurrency: 32, Requests: n, Recycle: true, Timeout: time.Minute})
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
		LiveOptions{URL: srv.URL, Concurrency: 1, Timeout: time.Minute})
	if err != nil || sum.Failed != 0 || sum.Requests != 5 {
		t.Fatalf("%+v %v", sum, err)
	}
	// One for the reachability check, one for the five requests.
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections for 5 requests one after the other, want 1 (and 1 for the reachability check)", n)
	}
}
