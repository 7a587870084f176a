package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

const msNs = int64(1e6)

// t0 is the run's first start; times below are ms after it.
const t0 = int64(1_750_000_000_000_000_000)

func i64(v int64) *int64 { return &v }

// live builds a live outcome: start and latency in ms, ttft in ms (<0:
// none), gaps in ms, usage (prompt, completion; prompt < 0: none).
func live(startMs, latMs, ttftMs int64, gaps []int64, prompt, completion int) *Live {
	l := &Live{StartNs: t0 + startMs*msNs, LatencyNs: latMs * msNs, OK: true, Stream: true}
	if ttftMs >= 0 {
		l.TTFTNs = i64(ttftMs * msNs)
	}
	for _, g := range gaps {
		l.ITLNs = append(l.ITLNs, g*msNs)
	}
	if prompt >= 0 {
		l.Usage = &records.Usage{PromptTokens: ip(prompt), CompletionTokens: completion, TotalTokens: ip(prompt + completion)}
	}
	return l
}

func failed(startMs, latMs int64, kind string) *Live {
	return &Live{StartNs: t0 + startMs*msNs, LatencyNs: latMs * msNs, Stream: true,
		Error: &struct {
			Kind string `json:"kind"`
		}{kind}}
}

// handRun is seven live requests and a warmup one (times in ms):
//
//	A  turn 0  ISL 1000  [0, 1000)     ttft 100  gaps 300 300 300  4 tokens  tpot 900/3 = 300
//	B  turn 1  ISL 2000  [500, 2500)   ttft 200  gaps 600 600 600  4 tokens  tpot 1800/3 = 600
//	C  turn 0  ISL 1000  [1000, 1500)  ttft 50   gap 450           2 tokens  tpot 450/1 = 450
//	D  turn 1  ISL 3000  [1500, 1800)  ttft 300  no gap            1 token   no tpot
//	E  turn 0  ISL 700   [2000, 2100)  http_5xx
//	F  turn 1  ISL 1500  [200, 3200)   timeout
//	G  turn 0  ISL 5000  [2500, 2700)  cancelled
//
// Prompt tokens 100, 200, 300, 400 for A–D. A, B and E carry schedule
// lags 1, 3 and 5 ms.
func handRun(o Options) *Accumulator {
	s := NewAccumulatorWith(o)
	add := func(isl, turn int, l *Live) {
		s.AddRequest(Request{ISL: rec(isl, ip(isl), nil, ip(turn)), Live: l})
	}
	a := live(0, 1000, 100, []int64{300, 300, 300}, 100, 4)
	a.ScheduleLagNs = i64(1 * msNs)
	add(1000, 0, a)
	b := live(500, 2000, 200, []int64{600, 600, 600}, 200, 4)
	b.ScheduleLagNs = i64(3 * msNs)
	add(2000, 1, b)
	add(1000, 0, live(1000, 500, 50, []int64{450}, 300, 2))
	add(3000, 1, live(1500, 300, 300, nil, 400, 1))
	e := failed(2000, 100, records.ErrHTTP5xx)
	e.ScheduleLagNs = i64(5 * msNs)
	add(700, 0, e)
	add(1500, 1, failed(200, 3000, records.ErrTimeout))
	add(5000, 0, failed(2500, 200, records.ErrCancelled))
	// A warmup request long before: it would stretch the duration.
	s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Warmup: true, Live: live(-10000, 50, 10, nil, 10, 1)})
	return s
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", name, deref(got), want)
	}
}

func nearV(t *testing.T, name string, got, want float64) { t.Helper(); near(t, name, &got, want) }

// std is the population standard deviation, by hand.
func std(vs ...float64) float64 {
	var m float64
	for _, v := range vs {
		m += v
	}
	m /= float64(len(vs))
	var ss float64
	for _, v := range vs {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(vs)))
}

// TestPerformanceByHand checks every figure of handRun against values
// worked out by hand (see handRun). Linear percentiles: rank p/100·(n−1)
// into the sorted values, interpolated.
func TestPerformanceByHand(t *testing.T) {
	s := handRun(Options{Percentiles: []float64{25, 99}}) // 99 is a default: not repeated
	r := s.Report()
	p := r.Performance
	if p == nil {
		t.Fatal("no performance section for live records")
	}
	if r.WarmupExcluded != 1 || r.Requests != 7 {
		t.Errorf("warmup_excluded %d, ISL requests %d; want 1, 7", r.WarmupExcluded, r.Requests)
	}
	if p.Requests != 7 || p.Succeeded != 4 || p.Failed != 2 || p.Cancelled != 1 || p.Streamed != 4 || p.WithoutUsage != 0 {
		t.Errorf("counts %d/%d/%d/%d streamed %d", p.Requests, p.Succeeded, p.Failed, p.Cancelled, p.Streamed)
	}
	if len(p.Errors) != 2 || p.Errors[records.ErrHTTP5xx] != 1 || p.Errors[records.ErrTimeout] != 1 {
		t.Errorf("errors %v, want http_5xx 1, timeout 1 (cancelled apart)", p.Errors)
	}
	// Duration: A's start (0) to F's end (3200 ms).
	nearV(t, "duration_s", p.DurationS, 3.2)
	if p.InputTokens != 1000 || p.OutputTokens != 11 {
		t.Errorf("tokens in %d out %d, want 1000, 11", p.InputTokens, p.OutputTokens)
	}
	nearV(t, "request_throughput", p.RequestThroughput, 4/3.2)
	nearV(t, "output_token_throughput", p.OutputTokenThroughput, 11/3.2)
	nearV(t, "total_token_throughput", p.TotalTokenThroughput, 1011/3.2)
	// In flight: 3 at most (A ends at 1000 as C starts: not 4); Σ
	// latency 7100 ms over 3200 ms.
	if p.PeakConcurrency != 3 {
		t.Errorf("peak concurrency %d, want 3", p.PeakConcurrency)
	}
	nearV(t, "mean_concurrency", p.MeanConcurrency, 7100.0/3200)

	// TTFT 100 200 50 300 → sorted 50 100 200 300.
	tt := p.TTFT
	if tt.N != 4 || len(tt.Percentiles) != 5 {
		t.Fatalf("ttft n=%d percentiles %v", tt.N, tt.Percentiles)
	}
	near(t, "ttft mean", tt.Mean, 162.5)
	near(t, "ttft std", tt.Std, std(50, 100, 200, 300))
	near(t, "ttft min", tt.Min, 50)
	near(t, "ttft max", tt.Max, 300)
	near(t, "ttft p50", tt.Get(50), 150)  // rank 1.5: 100 + .5·100
	near(t, "ttft p90", tt.Get(90), 270)  // rank 2.7: 200 + .7·100
	near(t, "ttft p95", tt.Get(95), 285)  // rank 2.85
	near(t, "ttft p99", tt.Get(99), 297)  // rank 2.97
	near(t, "ttft p25", tt.Get(25), 87.5) // rank 0.75: 50 + .75·50
	// TPOT 300 600 450 (D has one token) → sorted 300 450 600.
	tp := p.TPOT
	if tp.N != 3 {
		t.Errorf("tpot n=%d, want 3", tp.N)
	}
	near(t, "tpot mean", tp.Mean, 450)
	near(t, "tpot std", tp.Std, std(300, 450, 600))
	near(t, "tpot p50", tp.Get(50), 450) // rank 1
	near(t, "tpot p90", tp.Get(90), 570) // rank 1.8: 450 + .8·150
	near(t, "tpot p99", tp.Get(99), 597) // rank 1.98
	// ITL pooled: 300 300 300 600 600 600 450 → sorted 300×3 450 600×3.
	it := p.ITL
	if it.N != 7 {
		t.Errorf("itl n=%d, want 7", it.N)
	}
	near(t, "itl mean", it.Mean, 3150.0/7)
	near(t, "itl std", it.Std, std(300, 300, 300, 450, 600, 600, 600))
	near(t, "itl p50", it.Get(50), 450) // rank 3
	near(t, "itl p25", it.Get(25), 300) // rank 1.5
	near(t, "itl p90", it.Get(90), 600) // rank 5.4
	// E2E 1000 2000 500 300 → sorted 300 500 1000 2000.
	e2 := p.E2E
	near(t, "e2e mean", e2.Mean, 950)
	near(t, "e2e p50", e2.Get(50), 750)  // rank 1.5
	near(t, "e2e p99", e2.Get(99), 1970) // rank 2.97: 1000 + .97·1000
	near(t, "e2e min", e2.Min, 300)
	// Schedule lag 1 3 5 ms, failed requests included.
	if p.ScheduleLag == nil || p.ScheduleLag.N != 3 {
		t.Fatalf("schedule lag %+v, want n=3", p.ScheduleLag)
	}
	near(t, "lag p50", p.ScheduleLag.Get(50), 3)
	near(t, "lag p90", p.ScheduleLag.Get(90), 4.6) // rank 1.8: 3 + .8·2
	if p.Goodput != nil {
		t.Errorf("goodput without --slo: %+v", p.Goodput)
	}

	// By turn: turn 0 = A C E G, turn 1 = B D F.
	if len(p.ByTurn) != 2 {
		t.Fatalf("by_turn %+v", p.ByTurn)
	}
	g0, g1 := p.ByTurn[0], p.ByTurn[1]
	if *g0.Turn != 0 || g0.Requests != 4 || g0.Succeeded != 2 || g0.Failed != 2 {
		t.Errorf("turn 0: %+v", g0)
	}
	if *g1.Turn != 1 || g1.Requests != 3 || g1.Succeeded != 2 || g1.Failed != 1 {
		t.Errorf("turn 1: %+v", g1)
	}
	near(t, "turn 0 ttft p50", g0.TTFT.Get(50), 75)  // 50, 100
	near(t, "turn 1 ttft p50", g1.TTFT.Get(50), 250) // 200, 300
	near(t, "turn 0 tpot p50", g0.TPOT.Get(50), 375) // 300, 450
	if g1.TPOT.N != 1 || g1.ITL.N != 3 {
		t.Errorf("turn 1: tpot n=%d (B only), itl n=%d (B's 3 gaps)", g1.TPOT.N, g1.ITL.N)
	}
	// By ISL bucket: 512–1023 = A C E; 1024–2047 = B F; 2048–4095 = D;
	// 4096–8191 = G.
	type bucket struct{ lo, hi, req, ok int }
	want := []bucket{{512, 1023, 3, 2}, {1024, 2047, 2, 1}, {2048, 4095, 1, 1}, {4096, 8191, 1, 0}}
	if len(p.ByISL) != len(want) {
		t.Fatalf("by_isl %d buckets, want %d", len(p.ByISL), len(want))
	}
	for i, w := range want {
		g := p.ByISL[i]
		if *g.ISLMin != w.lo || *g.ISLMax != w.hi || int(g.Requests) != w.req || int(g.Succeeded) != w.ok {
			t.Errorf("bucket %d: %d–%d req %d ok %d, want %+v", i, *g.ISLMin, *g.ISLMax, g.Requests, g.Succeeded, w)
		}
	}
	near(t, "isl 512 ttft p50", p.ByISL[0].TTFT.Get(50), 75)
	if p.ByISL[3].TTFT.N != 0 || p.ByISL[3].TTFT.Mean != nil {
		t.Errorf("a bucket with no success has null latencies: %+v", p.ByISL[3].TTFT)
	}

	// Timeline: 3200 ms in bins of 50 ms (20 ms would give 160 > 120).
	tl := p.Timeline
	nearV(t, "bin_s", tl.BinS, 0.05)
	if len(tl.Bins) != 64 {
		t.Fatalf("%d bins, want 64", len(tl.Bins))
	}
	var tokens float64
	var started, completed, failedN uint64
	for _, b := range tl.Bins {
		tokens += b.OutputTokens
		started, completed, failedN = started+b.Started, completed+b.Completed, failedN+b.Failed
	}
	nearV(t, "Σ bin tokens", tokens, 11)
	if started != 7 || completed != 4 || failedN != 3 {
		t.Errorf("bins: started %d completed %d failed %d, want 7, 4, 3", started, completed, failedN)
	}
	// [0, 50): A alone; [500, 550): A, F, B; [2000, 2050): B, F, E;
	// [3150, 3200): F alone.
	nearV(t, "bin 0 concurrency", tl.Bins[0].Concurrency, 1)
	nearV(t, "bin 10 concurrency", tl.Bins[10].Concurrency, 3)
	nearV(t, "bin 40 concurrency", tl.Bins[40].Concurrency, 3)
	nearV(t, "bin 63 concurrency", tl.Bins[63].Concurrency, 1)
	// Chunks at 700 ms: A's third token and B's first, one token each.
	nearV(t, "bin 14 tokens", tl.Bins[14].OutputTokens, 2)
	nearV(t, "bin 14 tok/s", tl.Bins[14].OutputTokenThroughput, 40)
	nearV(t, "bin 2 tokens", tl.Bins[2].OutputTokens, 1) // A's first at 100 ms
	if tl.Bins[42].Failed != 1 {                         // E ends at 2100 ms
		t.Errorf("bin 42 failed %d, want 1", tl.Bins[42].Failed)
	}

	data := validate(t, s)
	if !bytes.Contains(data, []byte(`"p25":87.5`)) || !bytes.Contains(data, []byte(`"p99":297`)) {
		t.Errorf("percentile keys in JSON: %s", data)
	}
}

// TestGoodputByHand: handRun's succeeded requests A–D against several
// SLOs (A: ttft 100 tpot 300 e2e 1000; B: 200 600 2000; C: 50 450 500;
// D: 300, one token, 300).
func TestGoodputByHand(t *testing.T) {
	for _, c := range []struct {
		slo  string
		good uint64
	}{
		{"ttft=150ms,tpot=500ms", 2}, // A, C
		{"e2e=1s", 3},                // A, C, D (at 1000 ms: ≤ holds)
		{"tpot=400", 2},              // A, and D trivially
		{"ttft=1ms", 0},
		{"ttft=10s,tpot=10s,e2e=10s", 4}, // failed requests never count
	} {
		slo, err := ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		p := handRun(Options{SLO: slo}).Report().Performance
		g := p.Goodput
		if g == nil || g.Requests != c.good {
			t.Errorf("%s: goodput %+v, want %d", c.slo, g, c.good)
			continue
		}
		nearV(t, c.slo+" throughput", g.RequestThroughput, float64(c.good)/3.2)
		nearV(t, c.slo+" fraction", g.Fraction, float64(c.good)/7)
	}
}

func TestParseSLOAndPercentiles(t *testing.T) {
	o, err := ParseSLO("ttft=200ms, tpot=50, e2e=1.5s")
	if err != nil || *o.TTFT != 200 || *o.TPOT != 50 || *o.E2E != 1500 {
		t.Fatalf("%+v %v", o, err)
	}
	if o.String() != "ttft=200ms,tpot=50ms,e2e=1500ms" {
		t.Errorf("String %q", o.String())
	}
	for _, bad := range []string{"ttft", "ttft=fast", "itl=5ms", "ttft=1ms,ttft=2ms", "e2e=-1s", "tpot=0"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) accepted", bad)
		}
	}
	ps, err := ParsePercentiles("25, 75,99.9")
	if err != nil || len(ps) != 3 || ps[2] != 99.9 {
		t.Errorf("%v %v", ps, err)
	}
	for _, bad := range []string{"101", "-1", "x", "50,,"} {
		if _, err := ParsePercentiles(bad); err == nil {
			t.Errorf("ParsePercentiles(%q) accepted", bad)
		}
	}
	if got := percentileList([]float64{99.9, 50}); len(got) != 5 || got[4] != 99.9 {
		t.Errorf("percentile list %v", got)
	}
}

// numpy.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p) by hand: rank
// p/100·9, so p50 → 5.5, p90 → 9.1, p99 → 9.91, p0 → 1, p100 → 10;
// one value is every percentile.
func TestLinearPercentile(t *testing.T) {
	vs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]float64{50: 5.5, 90: 9.1, 99: 9.91, 0: 1, 100: 10, 25: 3.25} {
		nearV(t, "p"+strings.TrimSpace(Percentile{P: p}.Key()), linearPercentile(vs, p), want)
	}
	nearV(t, "one value", linearPercentile([]float64{7}, 99), 7)
}

func TestISLBucket(t *testing.T) {
	for v, want := range map[int]int{0: 0, -3: 0, 1: 1, 2: 2, 3: 2, 1023: 512, 1024: 1024, 1025: 1024, 8191: 4096} {
		if got := islBucket(v); got != want {
			t.Errorf("islBucket(%d) = %d, want %d", v, got, want)
		}
	}
}

// A dry run (no live outcome) has no performance section, in any output.
func TestDryRunHasNoPerformance(t *testing.T) {
	s := NewAccumulator()
	s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0))})
	r := s.Report()
	if r.Performance != nil {
		t.Fatalf("performance %+v for a dry run", r.Performance)
	}
	data := validate(t, s)
	if !bytes.Contains(data, []byte(`"performance":null`)) {
		t.Errorf("JSON: %s", data)
	}
	var text, page bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "performance") || strings.Contains(page.String(), TitleCDF) {
		t.Errorf("dry run shows a performance section:\n%s", text.String())
	}
	if !strings.Contains(page.String(), "no performance section") {
		t.Errorf("the page does not say why there is no performance section")
	}
}

// Failures by kind are in every output: text, JSON, the HTML report.
func TestFailuresInEveryOutput(t *testing.T) {
	s := handRun(Options{})
	s.AddUnreadable("bad_json")
	var text, page bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	data := validate(t, s)
	for name, out := range map[string]string{"text": text.String(), "page": page.String()} {
		for _, want := range []string{"failed 2 (http_5xx 1, timeout 1)", "cancelled 1", "unreadable lines 1 (bad_json 1)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	var j struct {
		Performance struct {
			Failed uint64            `json:"failed"`
			Errors map[string]uint64 `json:"errors"`
		} `json:"performance"`
		Unreadable struct {
			Total uint64 `json:"total"`
		} `json:"unreadable_lines"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	if j.Performance.Failed != 2 || j.Performance.Errors["http_5xx"] != 1 || j.Unreadable.Total != 1 {
		t.Errorf("JSON %+v", j)
	}
	for _, title := range []string{TitleKeyFigures, TitleCDF, TitleTTFTvsISL, TitleThroughput, TitleConcurrent, TitleISLErrors} {
		if !strings.Contains(page.String(), "<h2>"+title+"</h2>") {
			t.Errorf("page lacks %q", title)
		}
	}
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page.String(), bad) {
			t.Errorf("page has %q: a script or an external resource", bad)
		}
	}
}

// A request without usage: no tokens, no TPOT, but TTFT and E2E; a
// non-streamed success: in throughput and E2E (vLLM's e2el counts every
// successful request; issue 27 item 11: a --no-stream run had e2e n=0),
// not in TTFT, TPOT or ITL. A retried request is counted.
func TestWithoutUsageAndUnstreamed(t *testing.T) {
	s := NewAccumulator()
	s.AddRequest(Request{ISL: rec(10, nil, nil, nil), Live: live(0, 1000, 100, []int64{900}, -1, 0)})
	ns := live(0, 2000, -1, nil, 5, 7)
	ns.Stream = false
	ns.Retried = true
	s.AddRequest(Request{ISL: rec(10, nil, nil, nil), Live: ns})
	p := s.Report().Performance
	if p.Succeeded != 2 || p.Streamed != 1 || p.WithoutUsage != 1 || p.OutputTokens != 7 || p.InputTokens != 5 || p.Retried != 1 {
		t.Errorf("%+v", p)
	}
	if p.TTFT.N != 1 || p.TPOT.N != 0 || p.E2E.N != 2 || p.ITL.N != 1 {
		t.Errorf("n: ttft %d tpot %d e2e %d itl %d; want 1 0 2 1", p.TTFT.N, p.TPOT.N, p.E2E.N, p.ITL.N)
	}
	// e2e: 1000 and 2000 ms.
	near(t, "e2e mean", p.E2E.Mean, 1500)
	near(t, "e2e max", p.E2E.Max, 2000)
	if !strings.Contains(strings.Join(p.headline(), "\n"), "retried 1") {
		t.Errorf("headline without the retried count: %q", p.headline())
	}
	nearV(t, "duration", p.DurationS, 2)
	nearV(t, "output tok/s", p.OutputTokenThroughput, 3.5)
	validate(t, s)
}

// Stats survive a JSON round trip (what --compare reads).
func TestStatsJSONRoundTrip(t *testing.T) {
	st := statsOf([]int64{1 * msNs, 2 * msNs, 4 * msNs}, percentileList([]float64{99.9}))
	data, _ := json.Marshal(st)
	var back Stats
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("round trip\n%s\n%s", data, again)
	}
	empty, _ := json.Marshal(statsOf(nil, DefaultPercentiles))
	if string(empty) != `{"n":0,"mean":null,"std":null,"min":null,"max":null,"p50":null,"p90":null,"p95":null,"p99":null}` {
		t.Errorf("empty stats %s", empty)
	}
}

// The schema holds the performance section to its shape: a latency
// figure needs its default percentiles, nulls exactly when n is 0, and
// errors counts; a made-up member is refused.
func TestPerformanceSchemaRefuses(t *testing.T) {
	data, _ := json.Marshal(handRun(Options{}))
	for name, edit := range map[string]func(map[string]any){
		"no p50":          func(p map[string]any) { delete(p["ttft_ms"].(map[string]any), "p50") },
		"null with n > 0": func(p map[string]any) { p["ttft_ms"].(map[string]any)["mean"] = nil },
		"number with n=0": func(p map[string]any) {
			p["by_isl"].([]any)[3].(map[string]any)["ttft_ms"].(map[string]any)["p90"] = 1.0
		},
		"bad percentile": func(p map[string]any) { p["e2e_ms"].(map[string]any)["q50"] = 1.0 },
		"negative error": func(p map[string]any) { p["errors"].(map[string]any)["timeout"] = -1 },
		"unknown member": func(p map[string]any) { p["latency"] = 1 },
		"goodput fraction": func(p map[string]any) {
			p["goodput"] = map[string]any{"slo": map[string]any{"ttft_ms": 1}, "requests": 1, "request_throughput": 1, "fraction": 2}
		},
	} {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc["performance"].(map[string]any))
		bad, _ := json.Marshal(doc)
		if testutil.SchemaError(t, "summary.schema.json", bad) == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// Past maxTurnRows turns the table folds the rest into one row computed
// over their requests together (turns 8–11: 4 requests, TTFT 80..110 ms,
// p50 at rank 1.5 = 95 ms).
func TestPerformanceTurnsFold(t *testing.T) {
	s := NewAccumulator()
	for turn := range 12 {
		s.AddRequest(Request{ISL: rec(100, nil, nil, ip(turn)), Live: live(int64(turn)*10, 500, int64(turn)*10, nil, 1, 1)})
	}
	p := s.Report().Performance
	if len(p.ByTurn) != 12 || p.turnFold == nil || p.turnFold.Requests != 4 {
		t.Fatalf("by_turn %d, fold %+v", len(p.ByTurn), p.turnFold)
	}
	near(t, "folded ttft p50", p.turnFold.TTFT.Get(50), 95)
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(buf.String(), "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[0] == "turns" {
			found = f[1] == "8–11" && f[2] == "4" && f[5] == "95.00"
		}
	}
	if !found || strings.Contains(buf.String(), "turn 9 ") {
		t.Errorf("text:\n%s", buf.String())
	}
}
