package send

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/pace"
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
	o := Config{URL: s.URL(), Concurrency: 16, Recycle: true, Timeout: 10 * time.Second, NoPayload: true}
	wr := Wiring{observe: func(d time.Duration) { mu.Lock(); over = append(over, d); mu.Unlock() }}
	b.ResetTimer()
	total := 0
	var elapsed time.Duration
	for b.Loop() {
		o.Requests = 2000
		sum, err := Run(context.Background(), io.Discard, convs, bl, o, wr)
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

// cannedPoster answers every request at once with a fixed non-streamed
// result, as the client's parse would leave it.
type cannedPoster struct{}

func (cannedPoster) do(context.Context, time.Duration, []byte) records.Result {
	prompt := 1000
	return records.Result{StartNs: time.Now().UnixNano(), LatencyNs: 50000, Status: 200, OK: true,
		FinishReason: "length", OutputText: "tok tok",
		Usage: &records.Usage{PromptTokens: &prompt, CompletionTokens: 2, TotalTokens: new(1002)}}
}

// BenchmarkRequestOverhead is send's own work per request around the HTTP
// exchange (admit, body, record, encode), on one worker with a canned
// answer: what make bench-send's CPU per request adds to vegeta's.
func BenchmarkRequestOverhead(b *testing.B) {
	for _, size := range []struct {
		name string
		text string
	}{{"short", "Say hello to the benchmark, please."}, {"4KB", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)}} {
		b.Run(size.name, func(b *testing.B) {
			var convs []records.Conversation
			for i := range 100 {
				convs = append(convs, conv(fmt.Sprintf("bench-%d", i), i, cachebust.FirstTurnPrefix, "", size.text))
			}
			requestOverhead(b, convs)
		})
	}
}

func requestOverhead(b *testing.B, convs []records.Conversation) {
	bl, _ := NewBuilder(PayloadOptions{Stream: false}, nil)
	rec := newRecorder(io.Discard)
	rec.cpu = newCPUMeter(nil)
	is := pace.NewIssuer(context.Background(), time.Time{}, nil, pace.Shape{})
	defer is.Close()
	w := &worker{reqs: plainRequests{bl}, post: cannedPoster{}, hard: context.Background(), timeout: time.Minute, noPayload: true, now: time.Now,
		admit: is.Admit, ended: is.Ended, emit: rec.write, cache: newCachePredictor(), wait: is.Wait}
	b.ReportAllocs()
	i := 0
	// CPU time as well as wall time: on a shared machine the wall time
	// moves with the other tenants' load.
	cpu0, _ := processCPU()
	for b.Loop() {
		if _, err := w.session(pace.Session{Conv: &convs[i%len(convs)], Pass: i / len(convs)}, time.Time{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
}
