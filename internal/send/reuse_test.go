package send

import (
	"bytes"
	"context"
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
