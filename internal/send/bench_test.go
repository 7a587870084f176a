package send

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
)

// benchData: 100 conversations of 3 turns with ~1,000-token (4 KB) turns.
func benchData() []records.Conversation {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)
	var convs []records.Conversation
	for i := range 100 {
		convs = append(convs, conv("bench-"+string(rune('a'+i%26))+string(rune('0'+i/26)), i,
			cachebust.FirstTurnPrefix, "You are terse.", text, text, text))
	}
	return convs
}

// BenchmarkDryRun measures payload building + record encoding.
func BenchmarkDryRun(b *testing.B) {
	convs := benchData()
	bl, _ := NewBuilder(PayloadOptions{Stream: true}, nil)
	n := 0
	b.ResetTimer()
	for b.Loop() {
		k, err := DryRun(io.Discard, convs, bl, Shard{}, FormatJSONL)
		if err != nil {
			b.Fatal(err)
		}
		n += k
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "payloads/s")
}

// BenchmarkLive runs against the no-tokenize test server in-process and
// reports req/s and send's own per-request time (payload build, result
// bookkeeping, record encode) as overhead percentiles.
func BenchmarkLive(b *testing.B) {
	s := testserver.StartTest(b, testserver.Config{NoTokenize: true})
	convs := benchData()
	bl, _ := NewBuilder(PayloadOptions{Stream: true}, nil)
	var mu sync.Mutex
	var over []time.Duration
	o := LiveOptions{URL: s.URL(), Concurrency: 16, Recycle: true, Timeout: 10 * time.Second, NoPayload: true,
		observe: func(d time.Duration) { mu.Lock(); over = append(over, d); mu.Unlock() }}
	b.ResetTimer()
	total := 0
	var elapsed time.Duration
	for b.Loop() {
		o.Requests = 2000
		sum, err := Run(context.Background(), io.Discard, convs, bl, o)
		if err != nil || sum.Failed != 0 {
			b.Fatal(sum, err)
		}
		total += sum.Requests
		elapsed += sum.Elapsed
	}
	slices.Sort(over)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(over[len(over)/2].Microseconds()), "overhead-p50-µs")
	b.ReportMetric(float64(over[len(over)*99/100].Microseconds()), "overhead-p99-µs")
}
