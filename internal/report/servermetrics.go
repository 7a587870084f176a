package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/records"
)

// ServerMetrics is the server's own metrics over the run (send
// --scrape-metrics): the second witness of each scraped URL, and the
// scraped series for the plots.
type ServerMetrics struct {
	Witnesses []metrics.Witness `json:"witnesses"`
	Series    []MetricSeries    `json:"series"`
}

// MetricSeries is one scraped series over the run, summed over its label
// sets (histogram buckets left out: their _sum and _count are kept).
type MetricSeries struct {
	URL    string        `json:"url"`
	Name   string        `json:"name"`
	Points []MetricPoint `json:"points"`
}

// MetricPoint is one sample: TS is seconds since the first measured
// request started (the performance timeline's zero; the first sample's
// time when no request was live), negative before it.
type MetricPoint struct {
	TS    float64 `json:"t_s"`
	Value float64 `json:"value"`
}

// metricsAcc holds the metrics records and what the witness compares
// them with.
type metricsAcc struct {
	byURL map[string][]records.Metrics
	seen  map[[2]string]bool // URL and time: a sample read twice is kept once
	// client sums every live request, warmup included: the server served
	// those inside the scrape window too.
	client metrics.Client
	// genMissing counts succeeded requests without the server's usage:
	// then the generation counter has nothing exact to be compared with.
	genMissing int64
}

// AddMetrics keeps one metrics sample (send's islkit.metrics record).
func (s *Accumulator) AddMetrics(m records.Metrics) {
	a := &s.met
	if a.byURL == nil {
		a.byURL, a.seen = map[string][]records.Metrics{}, map[[2]string]bool{}
	}
	k := [2]string{m.URL, m.Time}
	if a.seen[k] {
		return
	}
	a.seen[k] = true
	a.byURL[m.URL] = append(a.byURL[m.URL], m)
}

// addRequest adds one request to the witness's client side.
func (a *metricsAcc) addRequest(r Request) {
	l := r.Live
	if l == nil {
		return
	}
	c := &a.client
	c.Sent++
	if l.OK {
		c.Succeeded++
	}
	u := l.Usage
	switch {
	case u != nil && u.PromptTokens != nil:
		c.PromptTokens += int64(*u.PromptTokens)
	case l.OK && !r.Unmeasured:
		n, _ := Reported(r.ISL)
		c.PromptTokens += int64(n)
		c.PromptEstimated++
	default:
		c.PromptUnknown++
	}
	switch {
	case u != nil && u.Counts() && !l.OutputCounted:
		c.GenerationTokens += int64(u.CompletionTokens)
		c.GenerationRequests++
	case l.OK:
		a.genMissing++
	}
	if e := r.ISL.ExpectedCached; e != nil {
		c.ExpectedCached += int64(*e)
		c.ExpectedCachedRequests++
	}
}

// report judges each URL's samples and lays out the series; nil without
// samples.
func (a *metricsAcc) report(p *Performance) *ServerMetrics {
	if len(a.byURL) == 0 {
		return nil
	}
	client := a.client
	if a.genMissing > 0 {
		client.GenerationRequests = 0
	}
	sm := &ServerMetrics{Witnesses: []metrics.Witness{}, Series: []MetricSeries{}}
	origin := int64(math.MaxInt64)
	if p != nil && p.Requests > 0 {
		origin = p.originNs
	}
	urls := slices.Sorted(maps.Keys(a.byURL))
	sorted := map[string][]records.Metrics{}
	for _, u := range urls {
		ms := slices.Clone(a.byURL[u])
		metrics.SortByTime(ms)
		sorted[u] = ms
		sm.Witnesses = append(sm.Witnesses, metrics.Judge(u, ms, client))
		if p == nil || p.Requests == 0 {
			for _, m := range ms {
				if t, ok := unixNs(m.Time); ok {
					origin = min(origin, t)
				}
			}
		}
	}
	for _, u := range urls {
		byName := map[string]*MetricSeries{}
		for _, m := range sorted[u] {
			t, ok := unixNs(m.Time)
			if m.Error != "" || !ok {
				continue
			}
			sums := map[string]float64{}
			for _, x := range m.Samples {
				if !strings.HasSuffix(x.Name, "_bucket") {
					sums[x.Name] += x.Value
				}
			}
			for name, v := range sums {
				sr := byName[name]
				if sr == nil {
					sr = &MetricSeries{URL: u, Name: name}
					byName[name] = sr
				}
				sr.Points = append(sr.Points, MetricPoint{TS: float64(t-origin) / 1e9, Value: v})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			sm.Series = append(sm.Series, *byName[name])
		}
	}
	return sm
}

func unixNs(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// lines are the witnesses' lines of the text summary.
func (m *ServerMetrics) lines() []string {
	var out []string
	for _, w := range m.Witnesses {
		out = append(out, w.Line())
	}
	return out
}

// TitleServerMetrics heads the report's section on the server's metrics.
const TitleServerMetrics = "Server metrics"

// series returns the first series of one of names (a server's name for
// it, vLLM's or SGLang's), nil when none was scraped.
func (m *ServerMetrics) series(names ...string) *MetricSeries {
	for _, n := range names {
		for i := range m.Series {
			if m.Series[i].Name == n {
				return &m.Series[i]
			}
		}
	}
	return nil
}

// rate is a counter's rise per second between consecutive samples, at
// each interval's middle.
func (s *MetricSeries) rate() (xs, ys []float64) {
	for i := 1; i < len(s.Points); i++ {
		a, b := s.Points[i-1], s.Points[i]
		if dt := b.TS - a.TS; dt > 0 {
			xs, ys = append(xs, (a.TS+b.TS)/2), append(ys, (b.Value-a.Value)/dt)
		}
	}
	return xs, ys
}

// histogramMean is a histogram's mean per interval in ms: the rise of its
// _sum over the rise of its _count between consecutive samples (points
// where the count did not rise are left out).
func histogramMean(sum, count *MetricSeries, label, colour string) series {
	sr := series{label: label, colour: colour, kind: "line"}
	at := map[float64]float64{}
	for _, p := range count.Points {
		at[p.TS] = p.Value
	}
	for i := 1; i < len(sum.Points); i++ {
		a, b := sum.Points[i-1], sum.Points[i]
		ca, okA := at[a.TS]
		cb, okB := at[b.TS]
		if okA && okB && cb > ca {
			sr.xs, sr.ys = append(sr.xs, (a.TS+b.TS)/2), append(sr.ys, 1000*(b.Value-a.Value)/(cb-ca))
		}
	}
	return sr
}

func (s *MetricSeries) xy() (xs, ys []float64) {
	for _, p := range s.Points {
		xs, ys = append(xs, p.TS), append(ys, p.Value)
	}
	return xs, ys
}

// writeHTML writes the witness lines and the server's series beside the
// client's: requests running and waiting against the client's requests
// in flight, the generation-token rate against the client's output
// tokens/s, the prompt-token and prefix-cache-hit rates, the TTFT
// histogram's mean per interval against the client's mean, and the
// KV-cache usage.
func (m *ServerMetrics) writeHTML(w io.Writer, p *Performance) {
	for _, wt := range m.Witnesses {
		class := ""
		if wt.Verdict == metrics.VerdictMismatch || wt.Verdict == metrics.VerdictForeign {
			class = ` class="bad"`
		}
		fmt.Fprintf(w, "<p%s>%s</p>\n", class, esc(wt.Line()))
	}
	var tl *Timeline
	if p != nil && len(p.Timeline.Bins) > 0 {
		tl = &p.Timeline
	}
	var charts []chart
	bounds := func(c *chart) {
		c.xlo, c.xhi, c.ylo, c.yhi = math.Inf(1), math.Inf(-1), 0, 0
		for _, sr := range c.series {
			for i := range sr.xs {
				c.xlo, c.xhi = min(c.xlo, sr.xs[i]), max(c.xhi, sr.xs[i])
				c.yhi = max(c.yhi, sr.ys[i])
			}
		}
		if math.IsInf(c.xlo, 0) {
			c.xlo, c.xhi, c.empty = 0, 1, "no data"
		}
	}
	add := func(c chart) {
		if len(c.series) == 0 {
			return
		}
		bounds(&c)
		charts = append(charts, c)
	}
	const xlabel = "time since first request (s)"
	// Requests in the server against the client's.
	c := chart{title: "Requests: server running and waiting, client in flight", xlabel: xlabel, ylabel: "requests"}
	if s := m.series("vllm:num_requests_running", "sglang:num_running_reqs"); s != nil {
		xs, ys := s.xy()
		c.series = append(c.series, series{label: "server running", colour: colTTFT, kind: "line", xs: xs, ys: ys})
	}
	if s := m.series("vllm:num_requests_waiting", "sglang:num_queue_reqs"); s != nil {
		xs, ys := s.xy()
		c.series = append(c.series, series{label: "server waiting", colour: colFail, kind: "line", xs: xs, ys: ys})
	}
	if len(c.series) > 0 && tl != nil {
		sr := series{label: "client in flight", colour: colTPOT, kind: "line", dashed: true}
		for _, b := range tl.Bins {
			sr.xs, sr.ys = append(sr.xs, b.StartS+tl.BinS/2), append(sr.ys, b.Concurrency)
		}
		c.series = append(c.series, sr)
	}
	add(c)
	c = chart{title: "Generation tokens/s: server counter, client output", xlabel: xlabel, ylabel: "tokens/s"}
	if s := m.series("vllm:generation_tokens_total", "sglang:generation_tokens_total"); s != nil {
		xs, ys := s.rate()
		c.series = append(c.series, series{label: "server", colour: colE2E, kind: "line", xs: xs, ys: ys})
		if tl != nil {
			sr := series{label: "client", colour: colTPOT, kind: "line", dashed: true}
			for _, b := range tl.Bins {
				sr.xs, sr.ys = append(sr.xs, b.StartS+tl.BinS/2), append(sr.ys, b.OutputTokenThroughput)
			}
			c.series = append(c.series, sr)
		}
	}
	add(c)
	c = chart{title: "Prompt tokens/s (server counter)", xlabel: xlabel, ylabel: "tokens/s"}
	if s := m.series("vllm:prompt_tokens_total", "sglang:prompt_tokens_total"); s != nil {
		xs, ys := s.rate()
		c.series = append(c.series, series{label: "prompt", colour: colITL, kind: "line", xs: xs, ys: ys})
	}
	if s := m.series("vllm:prefix_cache_hits_total", "sglang:cached_tokens_total"); s != nil {
		xs, ys := s.rate()
		c.series = append(c.series, series{label: "prefix-cache hits", colour: colTTFT, kind: "line", xs: xs, ys: ys, dashed: true})
	}
	add(c)
	c = chart{title: "TTFT: server histogram mean per interval, client mean", xlabel: xlabel, ylabel: "ms"}
	sum := m.series("vllm:time_to_first_token_seconds_sum", "sglang:time_to_first_token_seconds_sum")
	count := m.series("vllm:time_to_first_token_seconds_count", "sglang:time_to_first_token_seconds_count")
	if sum != nil && count != nil {
		c.series = append(c.series, histogramMean(sum, count, "server", colTTFT))
		if p != nil && p.TTFT.Mean != nil && len(c.series[0].xs) > 0 {
			xs := c.series[0].xs
			c.series = append(c.series, series{label: "client", colour: colTPOT, kind: "line", dashed: true,
				xs: []float64{xs[0], xs[len(xs)-1]}, ys: []float64{*p.TTFT.Mean, *p.TTFT.Mean}})
		}
		if len(c.series[0].xs) == 0 {
			c.series = nil
		}
	}
	add(c)
	c = chart{title: "KV-cache usage (server)", xlabel: xlabel, ylabel: "fraction used"}
	if s := m.series("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"); s != nil {
		xs, ys := s.xy()
		c.series = append(c.series, series{label: "KV cache", colour: colE2E, kind: "line", xs: xs, ys: ys})
	}
	add(c)
	if len(charts) > 0 {
		writeCharts(w, charts)
	}
}
