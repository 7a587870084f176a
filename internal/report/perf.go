package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// The performance section follows vLLM's `vllm bench serve`
// (vllm/benchmarks/serve.py, calculate_metrics), so figures compare with
// it one for one:
//
//   - requests: every live record but warmup ones; succeeded + failed +
//     cancelled = requests; errors: the failed ones by error kind.
//   - duration_s: earliest request start to latest request end.
//   - request_throughput = succeeded / duration_s; output_token_throughput
//     = Σ usage.completion_tokens of succeeded requests / duration_s;
//     total_token_throughput adds their usage.prompt_tokens.
//   - per succeeded request: e2e_ms (latency), streamed or not; per
//     succeeded streamed request: ttft_ms; tpot_ms = (e2e − ttft) /
//     (completion_tokens − 1) when completion_tokens > 1; itl_ms: every gap
//     between output chunks of those requests, pooled.
//   - mean, std (population, numpy's default ddof=0), min, max and
//     percentiles by linear interpolation between closest ranks (numpy's
//     default method).
//   - goodput: succeeded requests meeting every SLO given (value ≤ SLO;
//     the tpot of a request with completion_tokens ≤ 1 counts as 0).

// Definitions is the text of those definitions for --help.
const Definitions = `Performance (live records; vLLM bench serve's definitions):
  requests = succeeded + failed + cancelled (warmup records left out of
  everything); errors: failed requests by kind. duration_s: earliest
  request start to latest request end. request_throughput = succeeded /
  duration_s; output_token_throughput = sum of usage.completion_tokens of
  succeeded requests / duration_s (a request the server sent no usage for:
  its streamed text counted with measure's tokenizer, and said so);
  total_token_throughput adds their usage.prompt_tokens. Per succeeded
  request, streamed or not: e2e_ms (latency). Per succeeded streamed
  request: ttft_ms, tpot_ms = (e2e - ttft) / (completion_tokens - 1) when
  completion_tokens > 1; itl_ms = every gap between output chunks of those
  requests, pooled. Each: mean, std (population), min, max and p50, p90,
  p95, p99 (+ --percentiles) by linear interpolation between closest ranks
  (numpy's default). Goodput (--slo): succeeded requests whose every given
  figure is <= its SLO (tpot counts as 0 when completion_tokens <= 1);
  fraction = goodput requests / requests. Concurrency: requests in flight,
  peak and time-weighted mean over duration_s and per time bin.
  A dry run has no performance section.`

// DefaultPercentiles are always reported; --percentiles adds to them.
var DefaultPercentiles = []float64{50, 90, 95, 99}

// Live is what a live send record says about how its request went: the
// members of its "result" that the performance section reads, plus the
// client's schedule lag when send recorded it.
type Live struct {
	StartNs   int64          `json:"start_ns"`
	LatencyNs int64          `json:"latency_ns"`
	TTFTNs    *int64         `json:"ttft_ns"`
	ITLNs     []int64        `json:"itl_ns"`
	OK        bool           `json:"ok"`
	Stream    bool           `json:"stream"`
	Retried   bool           `json:"retried"`
	Usage     *records.Usage `json:"usage"`
	Error     *struct {
		Kind string `json:"kind"`
	} `json:"error"`
	// ScheduleLagNs is actual − intended start, when recorded.
	ScheduleLagNs *int64 `json:"schedule_lag_ns"`
	// SizingNs is the part of the lag send --exact spent sizing the
	// request, when recorded.
	SizingNs *int64 `json:"sizing_ns"`
	// QueueNs is the part of the lag spent waiting for a free worker or
	// for the warmup to end, when recorded.
	QueueNs *int64 `json:"queue_ns"`
	// ClientCPU is send's CPU use when it wrote the record, as a fraction
	// of the cores it may use, when recorded.
	ClientCPU *float64 `json:"client_cpu"`
	// OutputCounted: the server sent no usage, and Usage.CompletionTokens
	// is measure's count of the streamed text (set by measure, not read).
	OutputCounted bool `json:"-"`
}

// Request is one measured request as the summary reads it.
type Request struct {
	ISL records.ISL
	// Warmup requests are left out of the whole summary.
	Warmup bool
	// Live is the outcome of a live request; nil for dry runs and for
	// records that are not send records.
	Live *Live
	// Unmeasured marks a live request whose ISL could not be measured (its
	// line failed): it still counts in the performance section, as it was
	// sent, but not in the ISL tables.
	Unmeasured bool
	// ModelMismatch says how the model measure counts with differs from
	// the one the record was composed for (its composed_for); "" when it
	// does not, or either is unknown.
	ModelMismatch string
	// NoPayload marks a record written by send --no-payload (Unmeasured
	// too): counted apart in the summary.
	NoPayload bool
	// BenchmarkID and ConversationIndex are a send record's dataset and
	// conversation, which the merge of shards checks; "" for other
	// records.
	BenchmarkID       string
	ConversationIndex int
	// Stage is the load level the request was sent at (send --stages);
	// nil in a run of one level.
	Stage *records.Stage
}

// SLO holds the goodput objectives in milliseconds; nil is not set.
type SLO struct {
	TTFT *float64 `json:"ttft_ms,omitempty"`
	TPOT *float64 `json:"tpot_ms,omitempty"`
	E2E  *float64 `json:"e2e_ms,omitempty"`
}

func (o SLO) empty() bool { return o.TTFT == nil && o.TPOT == nil && o.E2E == nil }

// String is the SLO as --slo takes it, in ms.
func (o SLO) String() string {
	var parts []string
	for _, p := range []struct {
		k string
		v *float64
	}{{"ttft", o.TTFT}, {"tpot", o.TPOT}, {"e2e", o.E2E}} {
		if p.v != nil {
			parts = append(parts, p.k+"="+strconv.FormatFloat(*p.v, 'f', -1, 64)+"ms")
		}
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads --slo: "ttft=200ms,tpot=50ms,e2e=10s", any subset; a
// bare number is milliseconds (vLLM's --goodput unit).
func ParseSLO(s string) (SLO, error) {
	var o SLO
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return o, fmt.Errorf("--slo %q: want NAME=DURATION (ttft, tpot, e2e), e.g. ttft=200ms", part)
		}
		var ms float64
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			ms = f
		} else if d, err := time.ParseDuration(v); err == nil {
			ms = float64(d) / float64(time.Millisecond)
		} else {
			return o, fmt.Errorf("--slo %s: %q is not a duration (e.g. 200ms, 1.5s)", k, v)
		}
		if !(ms > 0) || math.IsInf(ms, 0) {
			return o, fmt.Errorf("--slo %s: must be positive", k)
		}
		var dst **float64
		switch strings.ToLower(k) {
		case "ttft":
			dst = &o.TTFT
		case "tpot":
			dst = &o.TPOT
		case "e2e", "e2el":
			dst = &o.E2E
		default:
			return o, fmt.Errorf("--slo: unknown figure %q (want ttft, tpot or e2e)", k)
		}
		if *dst != nil {
			return o, fmt.Errorf("--slo: %s given twice", k)
		}
		*dst = &ms
	}
	return o, nil
}

// ParsePercentiles reads --percentiles: "25,75,99.9", each in [0, 100].
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return nil, fmt.Errorf("--percentiles: %q is not a number from 0 to 100", part)
		}
		out = append(out, p)
	}
	return out, nil
}

// Options configures the performance section.
type Options struct {
	// Percentiles are reported on top of DefaultPercentiles.
	Percentiles []float64
	SLO         SLO
	// Client are the limits of the client verdict (CheckClient).
	Client ClientLimits
	// OSLTolerance is the output-length miss measure warns beyond
	// (zero: DefaultOSLTolerance).
	OSLTolerance *OSLTolerance
	// StartSkewLimit is the shards' start skew past which they did not
	// start together (zero: DefaultStartSkewLimit).
	StartSkewLimit time.Duration
	// MinGoodput is the goodput fraction a stage needs to meet the SLO
	// (zero: DefaultMinGoodput).
	MinGoodput float64
}

// perfReq is one live request, kept until Report.
type perfReq struct {
	start, end     int64
	lat            int64 // latency_ns (end − start unless end saturated)
	ok, cancelled  bool
	streamed       bool // succeeded, streamed, with a TTFT
	ttft           int64
	prompt, output int
	usage          bool
	outputCounted  bool // its output tokens counted by islkit (no server usage)
	isl            int
	turn           int
	hasTurn        bool
	itlOff, itlLen int // its gaps in perfAcc.itl
}

// perfAcc accumulates live records: a few numbers per request and every
// inter-chunk gap, since exact percentiles need every value (8 bytes a
// chunk).
type perfAcc struct {
	live   bool
	reqs   []perfReq
	itl    []int64
	lags   []int64
	sizing []int64 // each lag's part spent by send --exact's sizing
	queue  []int64 // each lag's part spent waiting for a worker or the warmup
	cpu    []float64
	errors map[string]uint64
	// retried counts the requests send sent a second time (result.retried).
	retried uint64
}

func (p *perfAcc) add(isl records.ISL, l *Live) {
	p.live = true
	// Nonsense times saturate instead of wrapping into a small span.
	r := perfReq{start: l.StartNs, end: satAdd(l.StartNs, max(l.LatencyNs, 0)), lat: max(l.LatencyNs, 0), ok: l.OK}
	r.isl, _ = Reported(isl)
	if isl.TurnIndex != nil {
		r.turn, r.hasTurn = *isl.TurnIndex, true
	}
	if l.ScheduleLagNs != nil {
		p.lags = append(p.lags, *l.ScheduleLagNs)
		var sizing int64
		if l.SizingNs != nil {
			sizing = *l.SizingNs
		}
		p.sizing = append(p.sizing, sizing)
		var queue int64
		if l.QueueNs != nil {
			queue = *l.QueueNs
		}
		p.queue = append(p.queue, queue)
	}
	if l.ClientCPU != nil {
		p.cpu = append(p.cpu, *l.ClientCPU)
	}
	if l.Retried {
		p.retried++
	}
	if !l.OK {
		kind := records.ErrProtocol
		if l.Error != nil && l.Error.Kind != "" {
			kind = l.Error.Kind
		}
		if kind == records.ErrCancelled {
			r.cancelled = true
		} else {
			p.errors[kind]++
		}
		p.reqs = append(p.reqs, r)
		return
	}
	if l.Usage != nil {
		r.output, r.usage, r.outputCounted = l.Usage.CompletionTokens, true, l.OutputCounted
		if l.Usage.PromptTokens != nil { // absent: no count, not 0
			r.prompt = *l.Usage.PromptTokens
		}
	}
	if l.Stream && l.TTFTNs != nil {
		r.streamed, r.ttft = true, *l.TTFTNs
		r.itlOff, r.itlLen = len(p.itl), len(l.ITLNs)
		p.itl = append(p.itl, l.ITLNs...)
	}
	p.reqs = append(p.reqs, r)
}

// Stats describes one latency figure over N values, in milliseconds;
// every value is nil (JSON null) when N is 0. Percentiles are in the
// order of Options (defaults first), written as "p50", "p99.9", ….
type Stats struct {
	N           uint64
	Mean        *float64
	Std         *float64
	Min         *float64
	Max         *float64
	Percentiles []Percentile
}

// Percentile is the P-th percentile's value; nil when N is 0.
type Percentile struct {
	P     float64
	Value *float64
}

// Key is the JSON member name of a percentile: "p50", "p99.9".
func (p Percentile) Key() string { return "p" + strconv.FormatFloat(p.P, 'f', -1, 64) }

// Get returns the value of percentile p, nil if absent or N is 0.
func (s Stats) Get(p float64) *float64 {
	for _, q := range s.Percentiles {
		if q.P == p {
			return q.Value
		}
	}
	return nil
}

// percentileList is the defaults then the extras, without repeats.
func percentileList(extra []float64) []float64 {
	out := slices.Clone(DefaultPercentiles)
	for _, p := range extra {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// statsOf computes Stats of values given in nanoseconds.
func statsOf(vs []int64, pcts []float64) Stats {
	st, _ := sortedStats(vs, pcts)
	return st
}

// sortedStats is statsOf that also returns the values in ms, ascending.
func sortedStats(vs []int64, pcts []float64) (Stats, []float64) {
	ns := make([]float64, len(vs))
	for i, v := range vs {
		ns[i] = float64(v)
	}
	return statsOfFloat(ns, pcts)
}

// linearPercentile is numpy.percentile's default ("linear") method over
// sorted values: the rank p/100·(n−1), interpolated between its floor and
// ceiling.
func linearPercentile(sorted []float64, p float64) float64 {
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	f := rank - float64(lo)
	a, b := sorted[lo], sorted[hi]
	if f == 0 || a == b {
		return a
	}
	return a + (b-a)*f
}

// Performance is the performance section of a live run (schemas/
// summary.schema.json, "performance").
type Performance struct {
	Requests  uint64            `json:"requests"`
	Succeeded uint64            `json:"succeeded"`
	Failed    uint64            `json:"failed"`
	Cancelled uint64            `json:"cancelled"`
	Errors    map[string]uint64 `json:"errors"`
	// Streamed is the succeeded requests with a TTFT (the population of
	// ttft, tpot and itl; e2e counts every succeeded one); WithoutUsage the succeeded ones without
	// usage (no tokens, no TPOT).
	Streamed     uint64 `json:"streamed"`
	WithoutUsage uint64 `json:"without_usage"`
	// OutputCounted is the succeeded requests without the server's usage
	// whose output tokens measure counted from the streamed text (with its
	// model's tokenizer): in OutputTokens and the throughput, not in
	// WithoutUsage.
	OutputCounted         uint64      `json:"output_tokens_counted"`
	DurationS             float64     `json:"duration_s"`
	InputTokens           uint64      `json:"input_tokens"`
	OutputTokens          uint64      `json:"output_tokens"`
	RequestThroughput     float64     `json:"request_throughput"`
	OutputTokenThroughput float64     `json:"output_token_throughput"`
	TotalTokenThroughput  float64     `json:"total_token_throughput"`
	PeakConcurrency       uint64      `json:"peak_concurrency"`
	MeanConcurrency       float64     `json:"mean_concurrency"`
	TTFT                  Stats       `json:"ttft_ms"`
	TPOT                  Stats       `json:"tpot_ms"`
	ITL                   Stats       `json:"itl_ms"`
	E2E                   Stats       `json:"e2e_ms"`
	ScheduleLag           *Stats      `json:"schedule_lag_ms"` // nil when no record had it
	Client                *Client     `json:"client"`          // nil when no record had a lag or CPU figure
	Goodput               *Goodput    `json:"goodput"`         // nil without --slo
	ByTurn                []PerfGroup `json:"by_turn"`
	ByISL                 []PerfGroup `json:"by_isl"`
	Timeline              Timeline    `json:"timeline"`
	// Retried is the requests send sent a second time, once, because
	// not a byte of the first attempt was written (result.retried).
	Retried uint64 `json:"retried"`

	// values are each latency figure's values in ms, ascending (ttft,
	// tpot, itl, e2e), for the report's CDFs.
	values [4][]float64
	// turnFold merges the turns past maxTurnRows for the tables.
	turnFold *PerfGroup
	// points are (ISL, TTFT ms) of succeeded streamed requests, and
	// (ISL, e2e ms) of failed ones, for the report's scatter plot.
	points []point
	// originNs is the earliest request start (Unix ns): the timeline's
	// zero, where the server's metrics are plotted from too.
	originNs int64
}

type point struct {
	isl  int
	ms   float64
	fail bool
}

// Goodput counts the succeeded requests that met every SLO.
type Goodput struct {
	SLO               SLO     `json:"slo"`
	Requests          uint64  `json:"requests"`
	RequestThroughput float64 `json:"request_throughput"`
	Fraction          float64 `json:"fraction"` // of all requests
}

// PerfGroup is the performance of the requests at one turn index or in
// one ISL bucket (ISLMin..ISLMax, reported counts, both inclusive).
type PerfGroup struct {
	Turn      *int   `json:"turn,omitempty"`
	ISLMin    *int   `json:"isl_min,omitempty"`
	ISLMax    *int   `json:"isl_max,omitempty"`
	Requests  uint64 `json:"requests"`
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"` // cancelled included
	TTFT      Stats  `json:"ttft_ms"`
	TPOT      Stats  `json:"tpot_ms"`
	ITL       Stats  `json:"itl_ms"`
	E2E       Stats  `json:"e2e_ms"`
}

// Timeline is the run in time bins of BinS seconds from the earliest
// start.
type Timeline struct {
	BinS float64 `json:"bin_s"`
	Bins []Bin   `json:"bins"`
}

// Bin is one time bin: Concurrency is the mean number of requests in
// flight over it; Completed and Failed count requests ending in it;
// OutputTokens spreads each succeeded request's completion tokens evenly
// over its output chunks (at its end when not streamed).
type Bin struct {
	StartS                float64 `json:"start_s"`
	Concurrency           float64 `json:"concurrency"`
	Started               uint64  `json:"started"`
	Completed             uint64  `json:"completed"`
	Failed                uint64  `json:"failed"`
	OutputTokens          float64 `json:"output_tokens"`
	OutputTokenThroughput float64 `json:"output_token_throughput"`
}

// maxBins bounds the timeline; bins are 1, 2 or 5 × 10^k ms wide.
const maxTimelineBins = 120

func (p *perfAcc) report(o Options) *Performance {
	if !p.live {
		return nil
	}
	pcts := percentileList(o.Percentiles)
	pr := &Performance{Errors: map[string]uint64{}, ByTurn: []PerfGroup{}, ByISL: []PerfGroup{}}
	for k, n := range p.errors {
		pr.Errors[k] = n
	}
	pr.Requests = uint64(len(p.reqs))
	pr.Retried = p.retried
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var inFlight float64
	for _, r := range p.reqs {
		lo, hi = min(lo, r.start), max(hi, r.end)
		inFlight += float64(r.lat)
		switch {
		case r.ok:
			pr.Succeeded++
			if r.streamed {
				pr.Streamed++
			}
			if r.outputCounted {
				pr.OutputCounted++
			}
			if r.usage {
				pr.InputTokens += uint64(max(r.prompt, 0))
				pr.OutputTokens += uint64(max(r.output, 0))
			} else {
				pr.WithoutUsage++
			}
		case r.cancelled:
			pr.Cancelled++
		default:
			pr.Failed++
		}
	}
	if len(p.reqs) > 0 {
		pr.DurationS = (float64(hi) - float64(lo)) / 1e9
	}
	if pr.DurationS > 0 {
		d := pr.DurationS
		pr.RequestThroughput = float64(pr.Succeeded) / d
		pr.OutputTokenThroughput = float64(pr.OutputTokens) / d
		pr.TotalTokenThroughput = float64(pr.InputTokens+pr.OutputTokens) / d
		pr.MeanConcurrency = inFlight / 1e9 / d
	}
	pr.PeakConcurrency = peakConcurrency(p.reqs)
	var st [4]Stats
	st, pr.values = p.latencyValues(p.reqs, pcts)
	pr.TTFT, pr.TPOT, pr.ITL, pr.E2E = st[0], st[1], st[2], st[3]
	if len(p.lags) > 0 {
		st := statsOf(slices.Clone(p.lags), pcts)
		pr.ScheduleLag = &st
	}
	pr.Client = CheckClient(p.lags, p.sizing, p.queue, p.cpu, o.Client)
	if !o.SLO.empty() {
		g := &Goodput{SLO: o.SLO}
		for _, r := range p.reqs {
			if r.ok && meets(r, o.SLO) {
				g.Requests++
			}
		}
		if pr.DurationS > 0 {
			g.RequestThroughput = float64(g.Requests) / pr.DurationS
		}
		if pr.Requests > 0 {
			g.Fraction = float64(g.Requests) / float64(pr.Requests)
		}
		pr.Goodput = g
	}
	pr.ByTurn = p.groups(pcts, func(r perfReq) (int, bool) { return r.turn, r.hasTurn }, func(k int, g *PerfGroup) { g.Turn = ptr(k) })
	if len(pr.ByTurn) > maxTurnRows+1 {
		from := *pr.ByTurn[maxTurnRows].Turn
		folded := p.groups(pcts, func(r perfReq) (int, bool) { return 0, r.hasTurn && r.turn >= from }, func(int, *PerfGroup) {})
		pr.turnFold = &folded[0]
	}
	pr.ByISL = p.groups(pcts, func(r perfReq) (int, bool) { return islBucket(r.isl), true }, func(k int, g *PerfGroup) {
		g.ISLMin, g.ISLMax = ptr(k), ptr(max(2*k-1, 0))
	})
	pr.Timeline = p.timeline(lo, hi)
	pr.originNs = lo
	for _, r := range p.reqs {
		switch {
		case r.streamed:
			pr.points = append(pr.points, point{isl: r.isl, ms: float64(r.ttft) / 1e6})
		case !r.ok:
			pr.points = append(pr.points, point{isl: r.isl, ms: float64(r.lat) / 1e6, fail: true})
		}
	}
	return pr
}

// tpot is (e2e − ttft) / (completion_tokens − 1), and whether it is
// defined.
func tpot(r perfReq) (float64, bool) {
	if !r.streamed || !r.usage || r.output <= 1 {
		return 0, false
	}
	return (float64(r.lat) - float64(r.ttft)) / float64(r.output-1), true
}

// meets says whether a succeeded request meets every SLO set (vLLM:
// slo ≥ value; a request without a TTFT cannot show it met a TTFT or
// TPOT objective).
func meets(r perfReq, o SLO) bool {
	const ms = 1e6
	if o.TTFT != nil && (!r.streamed || float64(r.ttft) > *o.TTFT*ms) {
		return false
	}
	if o.TPOT != nil {
		if !r.streamed {
			return false
		}
		if t, ok := tpot(r); ok && t > *o.TPOT*ms {
			return false
		}
	}
	if o.E2E != nil && float64(r.lat) > *o.E2E*ms {
		return false
	}
	return true
}

// latencies computes the four latency figures over the succeeded
// requests of reqs (e2e) and their streamed ones (the others).
func (p *perfAcc) latencies(reqs []perfReq, pcts []float64) (ttft, tp, itl, e2e Stats) {
	st, _ := p.latencyValues(reqs, pcts)
	return st[0], st[1], st[2], st[3]
}

// latencyValues is latencies as an array (ttft, tpot, itl, e2e), with
// each figure's values in ms, ascending.
func (p *perfAcc) latencyValues(reqs []perfReq, pcts []float64) ([4]Stats, [4][]float64) {
	var tt, ee, gaps []int64
	var tps []float64
	for _, r := range reqs {
		// e2e counts every succeeded request, streamed or not, as vLLM's
		// calculate_metrics does (issue 27 item 11: a --no-stream run had
		// no latency at all); the other figures need a stream.
		if r.ok {
			ee = append(ee, r.lat)
		}
		if !r.streamed {
			continue
		}
		tt = append(tt, r.ttft)
		gaps = append(gaps, p.itl[r.itlOff:r.itlOff+r.itlLen]...)
		if t, ok := tpot(r); ok {
			tps = append(tps, t)
		}
	}
	var st [4]Stats
	var vs [4][]float64
	st[0], vs[0] = sortedStats(tt, pcts)
	st[1], vs[1] = statsOfFloat(tps, pcts)
	st[2], vs[2] = sortedStats(gaps, pcts)
	st[3], vs[3] = sortedStats(ee, pcts)
	return st, vs
}

// statsOfFloat computes Stats of values in nanoseconds, reported in
// milliseconds.
func statsOfFloat(ns []float64, pcts []float64) (Stats, []float64) {
	st := Stats{N: uint64(len(ns))}
	for _, p := range pcts {
		st.Percentiles = append(st.Percentiles, Percentile{P: p})
	}
	if len(ns) == 0 {
		return st, nil
	}
	ms := make([]float64, len(ns))
	var sum float64
	for i, v := range ns {
		ms[i] = v / 1e6
		sum += ms[i]
	}
	slices.Sort(ms)
	mean := sum / float64(len(ms))
	var ss float64
	for _, v := range ms {
		ss += (v - mean) * (v - mean)
	}
	st.Mean, st.Std = ptr(mean), ptr(math.Sqrt(ss/float64(len(ms))))
	st.Min, st.Max = ptr(ms[0]), ptr(ms[len(ms)-1])
	for i, p := range pcts {
		st.Percentiles[i].Value = ptr(linearPercentile(ms, p))
	}
	return st, ms
}

// groups splits reqs by key, ascending.
func (p *perfAcc) groups(pcts []float64, key func(perfReq) (int, bool), label func(int, *PerfGroup)) []PerfGroup {
	by := map[int][]perfReq{}
	for _, r := range p.reqs {
		if k, ok := key(r); ok {
			by[k] = append(by[k], r)
		}
	}
	out := []PerfGroup{}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		rs := by[k]
		g := PerfGroup{Requests: uint64(len(rs))}
		label(k, &g)
		for _, r := range rs {
			if r.ok {
				g.Succeeded++
			} else {
				g.Failed++
			}
		}
		g.TTFT, g.TPOT, g.ITL, g.E2E = p.latencies(rs, pcts)
		out = append(out, g)
	}
	return out
}

// islBucket is the lower bound of v's power-of-two bucket [2^k, 2^(k+1));
// 0 for v < 1.
func islBucket(v int) int {
	if v < 1 {
		return 0
	}
	b := 1
	for b <= v/2 {
		b *= 2
	}
	return b
}

// peakConcurrency is the most requests in flight at once, over half-open
// intervals [start, end): an end at the same instant as a start comes
// first.
func peakConcurrency(reqs []perfReq) uint64 {
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(reqs))
	for _, r := range reqs {
		evs = append(evs, ev{r.start, 1}, ev{r.end, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return cmpInt64(a.t, b.t)
		}
		return a.d - b.d
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	return uint64(peak)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// binWidth is the narrowest 1-2-5 width in ns (≥ 1 ms) that cuts span
// into at most maxTimelineBins bins. Floats: absurd spans must not
// overflow.
func binWidth(span float64) float64 {
	for w := 1e6; ; w *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if span <= m*w*maxTimelineBins {
				return m * w
			}
		}
	}
}

// timeline bins the run. Times are float offsets from lo in ns, so
// nonsense records cannot overflow the arithmetic.
func (p *perfAcc) timeline(lo, hi int64) Timeline {
	span := float64(hi) - float64(lo)
	if len(p.reqs) == 0 || !(span > 0) {
		return Timeline{Bins: []Bin{}}
	}
	w := binWidth(span)
	n := int(min(math.Ceil(span/w), maxTimelineBins))
	n = max(n, 1)
	bins := make([]Bin, n)
	rel := func(t int64) float64 { return float64(t) - float64(lo) }
	idx := func(t float64) int { return int(min(max(math.Floor(t/w), 0), float64(n-1))) }
	for i := range bins {
		bins[i].StartS = float64(i) * w / 1e9
	}
	for _, r := range p.reqs {
		s0, e0 := rel(r.start), rel(r.end)
		bins[idx(s0)].Started++
		end := idx(e0)
		if r.ok {
			bins[end].Completed++
		} else {
			bins[end].Failed++
		}
		// Time-weighted concurrency: this request's overlap with each bin.
		for i := idx(s0); i <= end; i++ {
			b0, b1 := float64(i)*w, float64(i+1)*w
			if ov := min(b1, e0) - max(b0, s0); ov > 0 {
				bins[i].Concurrency += ov
			}
		}
		if !r.ok || !r.usage || r.output <= 0 {
			continue
		}
		if !r.streamed {
			bins[end].OutputTokens += float64(r.output)
			continue
		}
		per := float64(r.output) / float64(r.itlLen+1)
		t := s0 + float64(r.ttft)
		bins[idx(t)].OutputTokens += per
		for _, g := range p.itl[r.itlOff : r.itlOff+r.itlLen] {
			t += float64(g)
			bins[idx(t)].OutputTokens += per
		}
	}
	for i := range bins {
		// The last bin may be cut short by the end of the run.
		width := min(float64(i+1)*w, span) - float64(i)*w
		if width > 0 {
			bins[i].Concurrency /= width
			bins[i].OutputTokenThroughput = bins[i].OutputTokens / (width / 1e9)
		}
	}
	return Timeline{BinS: w / 1e9, Bins: bins}
}

// MarshalJSON writes n, mean, std, min, max, then each percentile by Key.
func (s Stats) MarshalJSON() ([]byte, error) {
	b := []byte(`{"n":`)
	b = strconv.AppendUint(b, s.N, 10)
	num := func(k string, v *float64) {
		b = append(b, `,"`...)
		b = append(b, k...)
		b = append(b, `":`...)
		if v == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, *v, 'g', -1, 64)
		}
	}
	num("mean", s.Mean)
	num("std", s.Std)
	num("min", s.Min)
	num("max", s.Max)
	for _, p := range s.Percentiles {
		num(p.Key(), p.Value)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes (for --compare);
// percentiles come back in ascending order.
func (s *Stats) UnmarshalJSON(data []byte) error {
	var m map[string]*float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = Stats{}
	for k, v := range m {
		switch k {
		case "n":
			if v != nil {
				s.N = uint64(*v)
			}
		case "mean":
			s.Mean = v
		case "std":
			s.Std = v
		case "min":
			s.Min = v
		case "max":
			s.Max = v
		default:
			p, err := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64)
			if err != nil || !strings.HasPrefix(k, "p") {
				return fmt.Errorf("statistics: unknown member %q", k)
			}
			s.Percentiles = append(s.Percentiles, Percentile{P: p, Value: v})
		}
	}
	slices.SortFunc(s.Percentiles, func(a, b Percentile) int { return cmpFloat(a.P, b.P) })
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
