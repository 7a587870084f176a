package report

import (
	"math"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/records"
)

func metricsSample(time string, prompt, finished float64) records.Metrics {
	return records.Metrics{Kind: records.KindMetrics, SchemaVersion: 1, URL: "http://h/metrics", Time: time, Samples: []records.MetricSample{
		{Name: "vllm:prompt_tokens_total", Value: prompt},
		{Name: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "stop"}, Value: finished},
		{Name: "vllm:num_requests_running", Value: finished / 2},
		{Name: "vllm:time_to_first_token_seconds_bucket", Labels: map[string]string{"le": "+Inf"}, Value: finished},
	}}
}

// TestWitnessClientSide: the witness's client side counts every live
// request, warmup included; a succeeded request without usage adds
// measure's count, a failed one without usage is left out and said; a
// sample read twice counts once; series are placed on the performance
// timeline's clock (its first measured request at 0).
func TestWitnessClientSide(t *testing.T) {
	s := NewAccumulator()
	ok := func(start int64, prompt *int, warmup bool) Request {
		isl := records.ISL{Counted: "templated", Templated: ptr(90)}
		l := &Live{StartNs: start, LatencyNs: 1e9, OK: true}
		if prompt != nil {
			l.Usage = &records.Usage{PromptTokens: prompt, CompletionTokens: 4}
		}
		return Request{ISL: isl, Live: l, Warmup: warmup}
	}
	t0 := int64(1767225600e9)                // 2026-01-01T00:00:00Z
	s.AddRequest(ok(t0-2e9, ptr(100), true)) // warmup: the server served it
	s.AddRequest(ok(t0, ptr(100), false))
	s.AddRequest(ok(t0+1e9, nil, false)) // no usage: measure's 90
	s.AddRequest(Request{ISL: records.ISL{Counted: "templated", Templated: ptr(50)}, Live: &Live{StartNs: t0 + 2e9, LatencyNs: 1}})
	before := metricsSample("2025-12-31T23:59:57Z", 1000, 10)
	s.AddMetrics(before)
	s.AddMetrics(before) // read twice (cat s.jsonl s.jsonl)
	s.AddMetrics(metricsSample("2026-01-01T00:00:04Z", 1290, 13))
	r := s.Report()
	sm := r.ServerMetrics
	if sm == nil || len(sm.Witnesses) != 1 {
		t.Fatalf("server metrics %+v", sm)
	}
	w := sm.Witnesses[0]
	if w.Scrapes != 2 || w.Verdict != metrics.VerdictAgrees || w.PromptTokens.Client != 290 || w.Requests.Client != 3 ||
		w.PromptEstimated != 1 || w.PromptUnknown != 1 || w.GenerationTokens != nil {
		t.Errorf("witness %+v prompt %+v requests %+v", w, w.PromptTokens, w.Requests)
	}
	if !strings.Contains(w.Line(), "1 failed request(s) without usage left out") {
		t.Errorf("line %s", w.Line())
	}
	var running *MetricSeries
	for i := range sm.Series {
		if strings.HasSuffix(sm.Series[i].Name, "_bucket") {
			t.Errorf("bucket series kept: %s", sm.Series[i].Name)
		}
		if sm.Series[i].Name == "vllm:num_requests_running" {
			running = &sm.Series[i]
		}
	}
	if running == nil || len(running.Points) != 2 || running.Points[0] != (MetricPoint{TS: -3, Value: 5}) || running.Points[1] != (MetricPoint{TS: 4, Value: 6.5}) {
		t.Errorf("running series %+v", running)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil || !strings.Contains(text.String(), "server metrics (http://h/metrics, 2 scrapes): the second witness agrees: requests 3, prompt tokens 290") {
		t.Errorf("text summary: %v\n%s", err, text.String())
	}
}

// TestHistogramMean: a histogram's mean per interval is Δsum/Δcount, in
// ms, at the interval's middle; an interval without observations has no
// point.
func TestHistogramMean(t *testing.T) {
	sum := &MetricSeries{Points: []MetricPoint{{0, 0}, {1, 0.5}, {2, 0.5}, {4, 1.1}}}
	count := &MetricSeries{Points: []MetricPoint{{0, 0}, {1, 5}, {2, 5}, {4, 8}}}
	sr := histogramMean(sum, count, "server", colTTFT)
	if len(sr.xs) != 2 || sr.xs[0] != 0.5 || sr.ys[0] != 100 || sr.xs[1] != 3 || math.Abs(sr.ys[1]-200) > 1e-9 {
		t.Errorf("means %v at %v; want 100 ms at 0.5 s and 200 ms at 3 s", sr.ys, sr.xs)
	}
}

// TestCompareServerMetrics: --compare sets the witnesses' figures side by
// side and leaves the scraped series out (not aligned between runs).
func TestCompareServerMetrics(t *testing.T) {
	summary := func(prompt float64) []byte {
		s := NewAccumulator()
		s.AddRequest(Request{ISL: records.ISL{}, Live: &Live{StartNs: 1767225600e9, LatencyNs: 1, OK: true,
			Usage: &records.Usage{PromptTokens: ptr(100), CompletionTokens: 1}}})
		s.AddMetrics(metricsSample("2026-01-01T00:00:00Z", 0, 0))
		s.AddMetrics(metricsSample("2026-01-01T00:00:01Z", prompt, 1))
		b, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var out strings.Builder
	if err := Compare(&out, "a.json", summary(100), "b.json", summary(200)); err != nil {
		t.Fatal(err)
	}
	if row := compareRow(t, out.String(), "server_metrics.witnesses[0].prompt_tokens.difference"); [3]string(row) != [3]string{"0", "100", "n/a"} {
		t.Errorf("difference row %v", row)
	}
	if strings.Contains(out.String(), "server_metrics.series") {
		t.Errorf("series compared:\n%s", out.String())
	}
}
