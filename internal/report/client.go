package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Client honesty: a load generator that falls behind its own schedule, or
// runs out of CPU, adds its own time to every latency it reports (vllm
// #39963, aiperf #1424). send records, per request, how late it went out
// (schedule_lag_ns) and how busy it was (client_cpu); CheckClient turns
// those into one verdict, which send prints on stderr and measure puts in
// its summary, so the two tools agree.

// Default client limits.
const (
	DefaultLagLimit = 5 * time.Millisecond
	DefaultCPULimit = 0.9
)

// ClientLimits are the thresholds past which the client counts as
// saturated: the p99 schedule lag above LagLimit, or the p99 CPU use
// (the fraction of the cores send may use) at or above CPULimit. Zero
// values take the defaults.
type ClientLimits struct {
	LagLimit time.Duration
	CPULimit float64
}

// Validate refuses limits that mean nothing (zero takes the default); the
// messages name send's and measure's flags.
func (l ClientLimits) Validate() error {
	switch {
	case l.LagLimit < 0:
		return fmt.Errorf("--client-lag-limit %v: want > 0", l.LagLimit)
	case math.IsNaN(l.CPULimit) || l.CPULimit < 0 || l.CPULimit > 1:
		return fmt.Errorf("--client-cpu-limit %v: want a fraction of send's cores, above 0 and at most 1", l.CPULimit)
	}
	return nil
}

func (l ClientLimits) orDefaults() ClientLimits {
	if l.LagLimit <= 0 {
		l.LagLimit = DefaultLagLimit
	}
	if l.CPULimit <= 0 {
		l.CPULimit = DefaultCPULimit
	}
	return l
}

// Client is the verdict on the client of a live run (summary.schema.json,
// performance.client).
type Client struct {
	// Requests is the number of records with a schedule lag.
	Requests   uint64   `json:"requests"`
	LagP50Ms   *float64 `json:"schedule_lag_p50_ms"`
	LagP99Ms   *float64 `json:"schedule_lag_p99_ms"`
	LagLimitMs float64  `json:"schedule_lag_limit_ms"`
	// SizingP99Ms is the p99 of the lags' part spent by send --exact
	// sizing each request (nil when none was sized); QueueP99Ms the p99
	// of their part spent waiting for a free worker or for the warmup to
	// end (result.queue_ns; nil when none waited); OwnLagP99Ms the p99 of
	// the lags less both: the lag the verdict judges (nil when neither
	// was recorded; its JSON name predates the queue wait).
	SizingP99Ms *float64 `json:"sizing_p99_ms,omitempty"`
	QueueP99Ms  *float64 `json:"queue_p99_ms,omitempty"`
	OwnLagP99Ms *float64 `json:"schedule_lag_without_sizing_p99_ms,omitempty"`
	// CPUP99 is the p99 over records of send's CPU use when each was
	// written, as a fraction of the cores it may use; nil when no record
	// carried it.
	CPUP99   *float64 `json:"cpu_p99"`
	CPUMax   *float64 `json:"cpu_max"`
	CPULimit float64  `json:"cpu_limit"`
	// Saturated says the client could not keep up: the latencies include
	// client time. Reasons say why, one line each.
	Saturated bool     `json:"saturated"`
	Reasons   []string `json:"reasons"`
	// Notes say what was late without saturating the client: requests
	// that --exact's sizing held back, or that waited for a free worker
	// or for the warmup to end (the latencies include neither).
	Notes []string `json:"notes,omitempty"`
}

// CheckClient is the verdict on lags (ns), sizing (the part of each lag
// spent by send --exact's sizing, ns), queue (the part of each lag spent
// waiting for a free worker or for the warmup to end, ns) — each nil or
// one per lag — and cpu (fractions of send's cores); nil when there is
// neither lags nor cpu.
//
// Sizing is send's work, and it delays the request, but it is done before
// the request's clock starts; the queue wait is the schedule's own
// constraint (--concurrency holding back a --rate or a trace, the
// --warmup barrier), not the client falling behind. A lag that is either
// alone is noted (the requests went out later than scheduled), not
// called saturation (the latencies are clean).
func CheckClient(lags, sizing, queue []int64, cpu []float64, lim ClientLimits) *Client {
	if len(lags) == 0 && len(cpu) == 0 {
		return nil
	}
	lim = lim.orDefaults()
	c := &Client{Requests: uint64(len(lags)), LagLimitMs: float64(lim.LagLimit) / 1e6, CPULimit: lim.CPULimit, Reasons: []string{}}
	if len(lags) > 0 {
		p50, p99 := msPercentiles(lags)
		c.LagP50Ms, c.LagP99Ms = &p50, &p99
		own := p99
		recorded := func(part []int64) bool {
			return len(part) == len(lags) && slices.ContainsFunc(part, func(v int64) bool { return v != 0 })
		}
		sized, queued := recorded(sizing), recorded(queue)
		if sized || queued {
			rest := slices.Clone(lags)
			if sized {
				_, sp99 := msPercentiles(sizing)
				c.SizingP99Ms = &sp99
				for i := range rest {
					rest[i] -= sizing[i]
				}
			}
			if queued {
				_, qp99 := msPercentiles(queue)
				c.QueueP99Ms = &qp99
				for i := range rest {
					rest[i] -= queue[i]
				}
			}
			_, own = msPercentiles(rest)
			c.OwnLagP99Ms = &own
		}
		var besides []string
		if sized {
			besides = append(besides, "--exact's sizing")
		}
		if queued {
			besides = append(besides, "the wait for a free worker or the warmup")
		}
		switch {
		case own > c.LagLimitMs && c.OwnLagP99Ms != nil:
			c.Reasons = append(c.Reasons, fmt.Sprintf("schedule lag p99 %.2f ms, %.2f ms besides %s, > %s: requests went out late", p99, own, strings.Join(besides, " and "), lim.LagLimit))
		case own > c.LagLimitMs:
			c.Reasons = append(c.Reasons, fmt.Sprintf("schedule lag p99 %.2f ms > %s: requests went out late", p99, lim.LagLimit))
		case p99 > c.LagLimitMs:
			if sized {
				c.Notes = append(c.Notes, fmt.Sprintf("requests went out late (schedule lag p99 %.2f ms > %s) because --exact sized each one first (sizing p99 %.2f ms, the lag besides it %.2f ms): the latencies do not include it",
					p99, lim.LagLimit, *c.SizingP99Ms, own))
			}
			if queued {
				c.Notes = append(c.Notes, fmt.Sprintf("requests waited for a free worker (--concurrency holds back the --rate or the trace's times) or for the --warmup requests to end (schedule lag p99 %.2f ms > %s, the wait p99 %.2f ms, the lag besides it %.2f ms): the schedule's own constraint, not client lag; the latencies do not include it",
					p99, lim.LagLimit, *c.QueueP99Ms, own))
			}
		}
	}
	if len(cpu) > 0 {
		s := slices.Clone(cpu)
		slices.Sort(s)
		p99, top := linearPercentile(s, 99), s[len(s)-1]
		p99, top = math.Round(p99*1000)/1000, math.Round(top*1000)/1000
		c.CPUP99, c.CPUMax = &p99, &top
		if p99 >= lim.CPULimit {
			c.Reasons = append(c.Reasons, fmt.Sprintf("client CPU p99 %.0f%% of its cores >= %.0f%%", p99*100, lim.CPULimit*100))
		}
	}
	c.Saturated = len(c.Reasons) > 0
	return c
}

// msPercentiles are the p50 and p99 of ns values, in ms.
func msPercentiles(ns []int64) (p50, p99 float64) {
	ms := make([]float64, len(ns))
	for i, v := range ns {
		ms[i] = float64(v) / 1e6
	}
	slices.Sort(ms)
	return linearPercentile(ms, 50), linearPercentile(ms, 99)
}

// Warning is the line that says the client was saturated; "" when not.
func (c *Client) Warning() string {
	if c == nil || !c.Saturated {
		return ""
	}
	return "the client was saturated (" + strings.Join(c.Reasons, "; ") + "): the latencies include client time"
}

// Note is the line that says what was late without saturating the
// client; "" when nothing was.
func (c *Client) Note() string {
	if c == nil {
		return ""
	}
	return strings.Join(c.Notes, "; ")
}
