package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

// stagedRun is three stages of two requests each, and a warmup request
// (times in ms; every request 4 output tokens, gaps 300 300 300):
//
//	stage 0, concurrency 1: [0, 1000) ttft 100; [1000, 2000) ttft 100
//	stage 1, concurrency 2: [3000, 4000) ttft 100; [3000, 4400) ttft 500
//	stage 2, concurrency 4: two [5000, 6400) ttft 500, lag 10 ms each
//	                         (above the 5 ms limit: the client saturated)
func stagedRun(o Options) *Accumulator {
	s := NewAccumulatorWith(o)
	gaps := []int64{300, 300, 300}
	add := func(stage records.Stage, l *Live) {
		s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Live: l, Stage: &stage})
	}
	c1, c2, c4 := records.Stage{Index: 0, Concurrency: 1}, records.Stage{Index: 1, Concurrency: 2}, records.Stage{Index: 2, Concurrency: 4}
	s.AddRequest(Request{ISL: rec(100, ip(100), nil, ip(0)), Warmup: true, Stage: &c1, Live: live(-5000, 100, 10, nil, 10, 1)})
	add(c1, live(0, 1000, 100, gaps, 100, 4))
	add(c1, live(1000, 1000, 100, gaps, 100, 4))
	add(c2, live(3000, 1000, 100, gaps, 100, 4))
	add(c2, live(3000, 1400, 500, gaps, 100, 4))
	for range 2 {
		l := live(5000, 1400, 500, gaps, 100, 4)
		l.ScheduleLagNs = i64(10 * msNs)
		add(c4, l)
	}
	return s
}

// TestStagesByHand: each stage's figures over its own requests and
// duration, its verdict against ttft ≤ 150 ms for 90 % of its requests,
// and the summary's highest stage meeting it (hand-computed).
func TestStagesByHand(t *testing.T) {
	slo, _ := ParseSLO("ttft=150ms")
	r := stagedRun(Options{SLO: slo}).Report()
	if len(r.Stages) != 3 {
		t.Fatalf("%d stages, want 3", len(r.Stages))
	}
	s0, s1, s2 := r.Stages[0], r.Stages[1], r.Stages[2]
	// Stage 0: 2 s, 2 requests, 8 tokens; both TTFTs 100: meets.
	if s0.Concurrency != 1 || s0.Requests != 2 || s0.Verdict != StageMeets {
		t.Errorf("stage 0: %+v", s0)
	}
	nearV(t, "stage 0 duration", s0.DurationS, 2)
	nearV(t, "stage 0 req/s", s0.RequestThroughput, 1)
	nearV(t, "stage 0 tok/s", s0.OutputTokenThroughput, 4)
	near(t, "stage 0 ttft p50", s0.TTFTP50Ms, 100)
	near(t, "stage 0 itl p99", s0.ITLP99Ms, 300)
	// Stage 1: 1.4 s; TTFTs 100 and 500: p50 300, p99 100 + 0.99·400 =
	// 496; one of two meets: 50 %, misses.
	nearV(t, "stage 1 duration", s1.DurationS, 1.4)
	nearV(t, "stage 1 req/s", s1.RequestThroughput, 2/1.4)
	nearV(t, "stage 1 tok/s", s1.OutputTokenThroughput, 8/1.4)
	near(t, "stage 1 ttft p50", s1.TTFTP50Ms, 300)
	near(t, "stage 1 ttft p99", s1.TTFTP99Ms, 496)
	near(t, "stage 1 itl p50", s1.ITLP50Ms, 300)
	if s1.Goodput == nil || s1.Goodput.Requests != 1 || s1.Goodput.Fraction != 0.5 || s1.Verdict != StageMisses {
		t.Errorf("stage 1: goodput %+v verdict %q, want 1 request (0.5), misses", s1.Goodput, s1.Verdict)
	}
	// Stage 2 misses with the client saturated: not the server's limit.
	if s2.Client == nil || !s2.Client.Saturated || s2.Verdict != StageClientLimited {
		t.Errorf("stage 2: client %+v verdict %q, want saturated, client_limited", s2.Client, s2.Verdict)
	}
	sl := r.StageSLO
	if sl == nil || sl.Highest == nil || sl.Highest.Index != 0 || sl.LowestMiss == nil || sl.LowestMiss.Index != 1 || sl.ClientLimited != 1 || sl.MinGoodput != DefaultMinGoodput {
		t.Fatalf("stage SLO %+v", sl)
	}
	// The whole run still counts every measured request once.
	if r.Performance.Requests != 6 || r.WarmupExcluded != 1 {
		t.Errorf("performance requests %d, warmup %d; want 6, 1", r.Performance.Requests, r.WarmupExcluded)
	}
	// --min-goodput 0.5: stage 1 meets.
	r = stagedRun(Options{SLO: slo, MinGoodput: 0.5}).Report()
	if r.Stages[1].Verdict != StageMeets || r.StageSLO.Highest.Index != 1 || r.StageSLO.LowestMiss != nil {
		t.Errorf("min goodput 0.5: stage 1 %q, SLO %+v", r.Stages[1].Verdict, r.StageSLO)
	}
	// Without --slo: figures, no verdict.
	r = stagedRun(Options{}).Report()
	if r.StageSLO != nil || r.Stages[1].Verdict != "" || r.Stages[1].Goodput != nil {
		t.Errorf("without --slo: %+v %+v", r.StageSLO, r.Stages[1])
	}
	// No stage: no member.
	data, _ := json.Marshal(handRun(Options{}).Report())
	if bytes.Contains(data, []byte(`"stages"`)) {
		t.Error("a run without stages has a stages member")
	}
}

// The stages in the JSON summary (schema-checked), the text summary and
// the HTML report, where every stage is a point of the Pareto plot.
func TestStagesOutputs(t *testing.T) {
	slo, _ := ParseSLO("ttft=150ms,tpot=400ms")
	s := stagedRun(Options{SLO: slo})
	data, err := json.Marshal(s.Report())
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"concurrency 4", "client_limited", "the highest stage meeting it is stage 0 (concurrency 1); the lowest missing it, stage 1 (concurrency 2)",
		"1 stage(s) missed it while the client was saturated"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, text.String())
		}
	}
	var page bytes.Buffer
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"0", "1", "2"} {
		for _, fig := range []string{"ttft_p50", "ttft_p99", "itl_p50", "itl_p99"} {
			if !strings.Contains(page.String(), `data-stage="`+st+`" data-figure="`+fig+`"`) {
				t.Errorf("the Pareto plot has no %s point of stage %s", fig, st)
			}
		}
	}
	for _, want := range []string{TitleStages, "SLO ttft", "SLO tpot"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// The run line above the summary names a staged run's plan.
func TestRunLineStages(t *testing.T) {
	l := runLine(records.Run{Tool: "send", Stream: true, Stages: &records.RunStages{Spec: "concurrency:1..8*2", UntilSLO: true, SLO: "ttft=200ms"}})
	if !strings.Contains(l, ", stages concurrency:1..8*2 until ttft=200ms;") {
		t.Errorf("run line %q", l)
	}
}
