package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

// FuzzCompare: any second file is compared or refused with an error,
// never a panic.
func FuzzCompare(f *testing.F) {
	// Small seeds: the mutator stalls on whole summaries.
	a, _ := json.Marshal(NewAccumulator())
	f.Add(a)
	f.Add([]byte(`{"kind":"islkit.summary","schema_version":1,"performance":{"ttft_ms":{"n":1,"p50":null},"errors":{"timeout":2},"timeline":{"bins":[{"start_s":0}]}},"by_turn":[{"turn":"x"},[1,{}]]}`))
	f.Add([]byte(`{"kind":"islkit.summary","schema_version":1,"x":[[[[]]]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Compare(&bytes.Buffer{}, "a", a, "b", b)
	})
}

// FuzzParseFlags: --slo and --percentiles accept or refuse, and what they
// accept is in range.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"ttft=200ms,tpot=50ms,e2e=10s", "tpot=1e3", "25,75,99.9", "e2e=1h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := ParseSLO(s); err == nil {
			for _, v := range []*float64{o.TTFT, o.TPOT, o.E2E} {
				if v != nil && !(*v > 0) {
					t.Errorf("%q: SLO %v", s, *v)
				}
			}
		}
		if ps, err := ParsePercentiles(s); err == nil {
			for _, p := range ps {
				if !(p >= 0 && p <= 100) {
					t.Errorf("%q: percentile %v", s, p)
				}
			}
		}
	})
}

// FuzzPerformance: any timings (however absurd) give a report that
// validates and renders, never a panic or a huge allocation.
func FuzzPerformance(f *testing.F) {
	f.Add(int64(0), int64(1000), int64(100), int64(300), int64(5), 4, true)
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), int64(-1), int64(math.MaxInt64), int64(0), -3, false)
	f.Fuzz(func(t *testing.T, start, lat, ttft, gap, lag int64, tokens int, ok bool) {
		s := NewAccumulatorWith(Options{SLO: SLO{TTFT: ptr(1.0)}, Percentiles: []float64{0, 100}})
		for i := range 3 {
			l := &Live{StartNs: start + int64(i), LatencyNs: lat, TTFTNs: &ttft, ITLNs: []int64{gap, gap}, OK: ok || i == 0, Stream: true,
				Usage: &records.Usage{CompletionTokens: tokens, PromptTokens: ip(tokens)}, ScheduleLagNs: &lag}
			s.AddRequest(Request{ISL: rec(tokens, ip(tokens), nil, ip(i)), Live: l})
		}
		r := s.Report()
		if len(r.Performance.Timeline.Bins) > maxTimelineBins {
			t.Fatalf("%d bins", len(r.Performance.Timeline.Bins))
		}
		if err := s.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteReport(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
