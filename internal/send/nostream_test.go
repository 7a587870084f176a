package send

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestNoTTFTWithoutStream: with --no-stream the first output arrives with
// the whole body, so a record carries no ttft_ns (or itl_ns) that a
// report could take for a TTFT; latency_ns is the time to the body (issue
// 11 item 4). The schema refuses ttft_ns on a non-streamed result.
func TestNoTTFTWithoutStream(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	var out bytes.Buffer
	if _, err := Run(context.Background(), &out, dataset(2, 2), newBuilder(t, PayloadOptions{Stream: false}),
		Config{URL: s.URL(), Concurrency: 2, Timeout: 10 * time.Second}, Wiring{}); err != nil {
		t.Fatal(err)
	}
	recs := liveRecords(t, &out)
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if !r.Result.OK || r.Result.Stream || r.Result.TTFTNs != nil || r.Result.ITLNs != nil || r.Result.LatencyNs <= 0 {
			t.Errorf("non-streamed result %+v: want no ttft_ns/itl_ns", r.Result)
		}
	}
	// The schema says so too: a non-streamed result with ttft_ns is invalid.
	recs[0].Result.TTFTNs = new(int64)
	if testutil.SchemaError(t, "request.schema.json", mustJSON(t, recs[0])) == nil {
		t.Error("schema accepts ttft_ns on a non-streamed result")
	}
}
