package report

import (
	"fmt"
	"sort"

	"github.com/islkit/islkit/internal/records"
)

// The load curve of a staged run (send --stages): the performance of
// each stage's requests on its own, and which stages met the SLO. send
// --until-slo judges each stage with these same figures while it runs,
// so the two tools agree on the limit they name.

// DefaultMinGoodput is the goodput fraction a stage needs to meet the SLO
// (--min-goodput).
const DefaultMinGoodput = 0.9

// Stage verdicts against the SLO.
const (
	StageMeets         = "meets"
	StageMisses        = "misses"
	StageClientLimited = "client_limited"
)

// StageReport is one stage's figures (summary.schema.json, "stages").
type StageReport struct {
	Index       int     `json:"index"`
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Requests    uint64  `json:"requests"`
	Succeeded   uint64  `json:"succeeded"`
	DurationS   float64 `json:"duration_s"`
	// Throughputs are per second of the stage's own duration (its
	// earliest start to its latest end).
	RequestThroughput     float64  `json:"request_throughput"`
	OutputTokenThroughput float64  `json:"output_token_throughput"`
	TTFTP50Ms             *float64 `json:"ttft_p50_ms"`
	TTFTP99Ms             *float64 `json:"ttft_p99_ms"`
	ITLP50Ms              *float64 `json:"itl_p50_ms"`
	ITLP99Ms              *float64 `json:"itl_p99_ms"`
	// Goodput is nil without --slo; Verdict is StageMeets (goodput
	// fraction at or above the minimum), StageMisses, or
	// StageClientLimited: missed while the client was saturated, so the
	// miss may be send's and the stage is not the server's limit. "" without
	// --slo.
	Goodput *Goodput `json:"goodput"`
	Verdict string   `json:"slo_verdict,omitempty"`
	// Client is the client verdict over the stage's requests (nil when
	// none recorded a lag or CPU figure).
	Client *Client `json:"client"`
}

// Level is the stage's load: its concurrency or its rate.
func (s StageReport) Level() float64 {
	if s.Concurrency > 0 {
		return float64(s.Concurrency)
	}
	return s.Rate
}

// LevelString is "concurrency 4" or "rate 2.5/s".
func (s StageReport) LevelString() string {
	if s.Concurrency > 0 {
		return fmt.Sprintf("concurrency %d", s.Concurrency)
	}
	return fmt.Sprintf("rate %g/s", s.Rate)
}

// StageSLO is what the stages say about the SLO (summary.schema.json,
// "stage_slo"): the highest stage that met it and the lowest that missed
// it (nil: none), by level; a client-limited stage is neither.
type StageSLO struct {
	SLO        SLO          `json:"slo"`
	MinGoodput float64      `json:"min_goodput"`
	Highest    *StageReport `json:"highest_meeting"`
	LowestMiss *StageReport `json:"lowest_missing"`
	// ClientLimited counts the stages where the client was the limit.
	ClientLimited int `json:"client_limited"`
}

type stageAcc struct {
	stage records.Stage
	perf  perfAcc
}

func (s *Accumulator) addStage(st *records.Stage, r Request) {
	if s.stages == nil {
		s.stages = map[int]*stageAcc{}
	}
	a := s.stages[st.Index]
	if a == nil {
		a = &stageAcc{stage: *st, perf: perfAcc{errors: map[string]uint64{}}}
		s.stages[st.Index] = a
	}
	a.perf.add(r.ISL, r.Live)
}

// stageReports are the stages in index order, and the SLO summary (nil
// without --slo or stages).
func (s *Accumulator) stageReports() ([]StageReport, *StageSLO) {
	if len(s.stages) == 0 {
		return nil, nil
	}
	idx := make([]int, 0, len(s.stages))
	for i := range s.stages {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	minGoodput := s.opts.MinGoodput
	if minGoodput == 0 {
		minGoodput = DefaultMinGoodput
	}
	out := make([]StageReport, 0, len(idx))
	for _, i := range idx {
		a := s.stages[i]
		out = append(out, stageReport(a.stage, a.perf.report(Options{SLO: s.opts.SLO, Client: s.opts.Client}), minGoodput))
	}
	if s.opts.SLO.empty() {
		return out, nil
	}
	sum := &StageSLO{SLO: s.opts.SLO, MinGoodput: minGoodput}
	for i := range out {
		st := &out[i]
		switch st.Verdict {
		case StageMeets:
			if sum.Highest == nil || st.Level() > sum.Highest.Level() {
				sum.Highest = st
			}
		case StageMisses:
			if sum.LowestMiss == nil || st.Level() < sum.LowestMiss.Level() {
				sum.LowestMiss = st
			}
		case StageClientLimited:
			sum.ClientLimited++
		}
	}
	return out, sum
}

// stageReport is a stage's figures from its performance.
func stageReport(st records.Stage, p *Performance, minGoodput float64) StageReport {
	r := StageReport{Index: st.Index, Concurrency: st.Concurrency, Rate: st.Rate}
	if p == nil {
		return r
	}
	r.Requests, r.Succeeded, r.DurationS = p.Requests, p.Succeeded, p.DurationS
	r.RequestThroughput, r.OutputTokenThroughput = p.RequestThroughput, p.OutputTokenThroughput
	r.TTFTP50Ms, r.TTFTP99Ms = p.TTFT.Get(50), p.TTFT.Get(99)
	r.ITLP50Ms, r.ITLP99Ms = p.ITL.Get(50), p.ITL.Get(99)
	r.Goodput, r.Client = p.Goodput, p.Client
	if g := p.Goodput; g != nil {
		switch {
		case g.Fraction >= minGoodput:
			r.Verdict = StageMeets
		case p.Client != nil && p.Client.Saturated:
			r.Verdict = StageClientLimited
		default:
			r.Verdict = StageMisses
		}
	}
	return r
}

// CheckMinGoodput refuses a --min-goodput that is no fraction.
func CheckMinGoodput(f float64) error {
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("--min-goodput %v: want the fraction of a stage's requests that must meet the SLO, above 0 and at most 1", f)
	}
	return nil
}
