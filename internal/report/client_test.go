package report

import (
	"strings"
	"testing"
	"time"
)

// TestClientVerdict: handRun's lags are 1, 3 and 5 ms, so the p50 is 3 ms
// and the p99 (rank 1.98) 3 + 0.98·2 = 4.96 ms: under the default 5 ms
// limit, over a 4 ms one; the warmup request carries a 900 ms lag that
// must not count. CPU figures: p99 of 0.2, 0.5, 0.95 (rank 1.98) =
// 0.5 + 0.98·0.45 = 0.941 ≥ 0.9.
func TestClientVerdict(t *testing.T) {
	s := handRun(Options{})
	lag := int64(900 * msNs)
	s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Warmup: true, Live: &Live{StartNs: 1, ScheduleLagNs: &lag, OK: true}})
	p := s.Report().Performance
	c := p.Client
	if c == nil || c.Requests != 3 || c.Saturated || len(c.Reasons) != 0 || c.LagLimitMs != 5 || c.CPUP99 != nil {
		t.Fatalf("calm run: %+v", c)
	}
	near(t, "lag p50", c.LagP50Ms, 3)
	near(t, "lag p99", c.LagP99Ms, 4.96)
	if strings.Contains(strings.Join(p.headline(), "\n"), "saturated") {
		t.Errorf("calm run flagged: %q", p.headline())
	}

	p = handRun(Options{Client: ClientLimits{LagLimit: 4 * time.Millisecond}}).Report().Performance
	if c := p.Client; !c.Saturated || len(c.Reasons) != 1 || !strings.Contains(c.Reasons[0], "schedule lag p99 4.96 ms > 4ms") {
		t.Errorf("4 ms limit: %+v", c)
	}
	if h := strings.Join(p.headline(), "\n"); !strings.Contains(h, "WARNING: the client was saturated (schedule lag p99 4.96 ms > 4ms") ||
		!strings.Contains(h, "the latencies include client time") {
		t.Errorf("headline: %s", h)
	}

	c = CheckClient(nil, nil, nil, []float64{0.95, 0.2, 0.5}, ClientLimits{})
	near(t, "cpu p99", c.CPUP99, 0.941)
	near(t, "cpu max", c.CPUMax, 0.95)
	if !c.Saturated || c.LagP99Ms != nil || !strings.Contains(c.Warning(), "client CPU p99 94% of its cores >= 90%") {
		t.Errorf("busy CPU: %+v %q", c, c.Warning())
	}
	if c := CheckClient([]int64{1e6}, nil, nil, []float64{0.5}, ClientLimits{}); c.Saturated || c.Warning() != "" || c.Note() != "" {
		t.Errorf("calm: %+v", c)
	}
	if CheckClient(nil, nil, nil, nil, ClientLimits{}) != nil || (*Client)(nil).Warning() != "" {
		t.Error("no figures: want no verdict")
	}
}

// TestSizingLag: the lag --exact's sizing adds is noted, not called
// saturation, unless the lag besides it passes the limit. Lags 2, 8, 10
// ms with sizing 1, 7, 9: the p99 lag (rank 1.98) is 8 + 0.98·2 =
// 9.96 ms, over 5 ms; the sizing p99 is 7 + 0.98·2 = 8.96 ms; the lag
// besides it is 1 ms each: calm, one note. With sizing 0, 0, 1 the lag
// besides it is 2, 8, 9 ms, p99 8 + 0.98·1 = 8.98 ms: saturated.
func TestSizingLag(t *testing.T) {
	lags := []int64{2 * msNs, 8 * msNs, 10 * msNs}
	c := CheckClient(lags, []int64{1 * msNs, 7 * msNs, 9 * msNs}, nil, nil, ClientLimits{})
	near(t, "lag p99", c.LagP99Ms, 9.96)
	near(t, "sizing p99", c.SizingP99Ms, 8.96)
	near(t, "own lag p99", c.OwnLagP99Ms, 1)
	if c.Saturated || c.Warning() != "" || len(c.Notes) != 1 ||
		!strings.Contains(c.Note(), "schedule lag p99 9.96 ms > 5ms) because --exact sized each one first (sizing p99 8.96 ms, the lag besides it 1.00 ms)") ||
		!strings.Contains(c.Note(), "the latencies do not include it") {
		t.Errorf("sizing alone: %+v, note %q", c, c.Note())
	}
	c = CheckClient(lags, []int64{0, 0, 1 * msNs}, nil, nil, ClientLimits{})
	near(t, "own lag p99", c.OwnLagP99Ms, 8.98)
	if !c.Saturated || c.Note() != "" || !strings.Contains(c.Warning(), "schedule lag p99 9.96 ms, 8.98 ms besides --exact's sizing, > 5ms") {
		t.Errorf("lag besides sizing: %+v, %q", c, c.Warning())
	}
	// Without --exact (no sizing recorded) the whole lag is judged.
	if c := CheckClient(lags, make([]int64, 3), nil, nil, ClientLimits{}); !c.Saturated || c.SizingP99Ms != nil || c.OwnLagP99Ms != nil {
		t.Errorf("no sizing: %+v", c)
	}
	// The summary says it under the performance section.
	s := handRun(Options{})
	for i, lag := range lags {
		sizing := lag - msNs
		s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Live: &Live{StartNs: int64(i + 10), LatencyNs: msNs, ScheduleLagNs: &lags[i], SizingNs: &sizing, OK: true}})
	}
	if h := strings.Join(s.Report().Performance.headline(), "\n"); !strings.Contains(h, "note: requests went out late") || strings.Contains(h, "WARNING") {
		t.Errorf("headline: %s", h)
	}
}

// TestQueueLag: the part of a lag spent waiting for a free worker or for
// the warmup to end (result.queue_ns) is the schedule's own constraint,
// not client lag: noted, never saturation (issue 27 item 5: --rate 100
// --concurrency 1 and --warmup 3 --concurrency 2 were reported as a
// saturated client). Lags 2, 8, 10 ms with queue waits 1, 7, 9 ms: the
// p99 lag 9.96 ms, the wait's 8.96 ms, the lag besides it 1 ms each.
// With a queue wait of 0, 0, 1 ms the lag besides it is 2, 8, 9 ms, p99
// 8.98 ms: saturated. Sizing and queue together are both taken out.
func TestQueueLag(t *testing.T) {
	lags := []int64{2 * msNs, 8 * msNs, 10 * msNs}
	c := CheckClient(lags, nil, []int64{1 * msNs, 7 * msNs, 9 * msNs}, nil, ClientLimits{})
	near(t, "queue p99", c.QueueP99Ms, 8.96)
	near(t, "own lag p99", c.OwnLagP99Ms, 1)
	if c.Saturated || c.Warning() != "" || len(c.Notes) != 1 || !strings.Contains(c.Note(), "requests waited for a free worker") ||
		!strings.Contains(c.Note(), "the wait p99 8.96 ms, the lag besides it 1.00 ms") || !strings.Contains(c.Note(), "not client lag") {
		t.Errorf("queue alone: %+v, note %q", c, c.Note())
	}
	c = CheckClient(lags, nil, []int64{0, 0, 1 * msNs}, nil, ClientLimits{})
	if !c.Saturated || !strings.Contains(c.Warning(), "schedule lag p99 9.96 ms, 8.98 ms besides the wait for a free worker or the warmup, > 5ms") {
		t.Errorf("lag besides the queue: %+v, %q", c, c.Warning())
	}
	c = CheckClient(lags, []int64{1 * msNs, 1 * msNs, 1 * msNs}, []int64{0, 6 * msNs, 8 * msNs}, nil, ClientLimits{})
	near(t, "own lag p99", c.OwnLagP99Ms, 1)
	if c.Saturated || len(c.Notes) != 2 {
		t.Errorf("sizing and queue: %+v", c)
	}
	// measure reads result.queue_ns.
	s := NewAccumulator()
	for i, lag := range lags {
		q := lag - msNs
		s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Live: &Live{StartNs: int64(i + 10), LatencyNs: msNs, ScheduleLagNs: &lags[i], QueueNs: &q, OK: true}})
	}
	if h := strings.Join(s.Report().Performance.headline(), "\n"); !strings.Contains(h, "note: requests waited for a free worker") || strings.Contains(h, "WARNING") {
		t.Errorf("headline: %s", h)
	}
	validate(t, s)
}
