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

	c = CheckClient(nil, []float64{0.95, 0.2, 0.5}, ClientLimits{})
	near(t, "cpu p99", c.CPUP99, 0.941)
	near(t, "cpu max", c.CPUMax, 0.95)
	if !c.Saturated || c.LagP99Ms != nil || !strings.Contains(c.Warning(), "client CPU p99 94% of its cores >= 90%") {
		t.Errorf("busy CPU: %+v %q", c, c.Warning())
	}
	if c := CheckClient([]int64{1e6}, []float64{0.5}, ClientLimits{}); c.Saturated || c.Warning() != "" {
		t.Errorf("calm: %+v", c)
	}
	if CheckClient(nil, nil, ClientLimits{}) != nil || (*Client)(nil).Warning() != "" {
		t.Error("no figures: want no verdict")
	}
}
