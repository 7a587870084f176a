package send

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send/pace"
	"github.com/islkit/islkit/internal/testserver"
)

// capacityServer serves 2 requests at once and queues the rest; each
// takes 16 tokens (the dataset's max_tokens) at 40 a second, 400 ms.
// Under a closed-loop load of c sessions, up to 2 never wait (the server frees a place before its last
// event, so the next request finds it) and every request beyond waits
// a whole service time: its TTFT is about 400 ms against a few ms. The
// SLO at 200 ms sits between the two, so no machine load short of a
// 200 ms stall flips a request's verdict; each stage sends 6 requests
// (1.2 s at concurrency 1: 3), and a stage meets the SLO with 75 % of
// them meeting it: at concurrency 2 one stalled request leaves 83 %, at
// 3 (one more than the capacity) two of the six wait: 67 %.
func capacityServer(t *testing.T) *testserver.Server {
	return testserver.StartTest(t, testserver.Config{NoTokenize: true, MaxConcurrency: 2, TokensPerSecond: 40, DefaultMaxTokens: 16})
}

func stageSLO(t *testing.T) report.SLO {
	slo, err := report.ParseSLO("ttft=200ms")
	if err != nil {
		t.Fatal(err)
	}
	return slo
}

func stagedRun(t *testing.T, url string, plan *StagePlan) (Summary, *bytes.Buffer) {
	t.Helper()
	o := Config{URL: url, Timeout: 30 * time.Second, Grace: 30 * time.Second, Stages: plan,
		// The verdicts judge the server: a loaded test machine must not
		// make the client look saturated.
		ClientLimits: report.ClientLimits{LagLimit: 10 * time.Second, CPULimit: 1}}
	convs := dataset(8, 1)
	for i := range convs {
		convs[i].Turns[0].MaxTokens = 16
	}
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}), o, Wiring{})
	if err != nil || sum.Failed != 0 {
		t.Fatal(sum, err)
	}
	return sum, &out
}

// TestStagesFindCapacity: six concurrency stages (1..32, doubling)
// against a server that serves 2 at once: the stages up to 2 meet a TTFT
// objective and those above miss it, so the highest stage meeting it is
// the capacity; every record carries its stage.
func TestStagesFindCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep of six stages takes seconds")
	}
	t.Parallel()
	s := capacityServer(t)
	levels, err := pace.ParseStages("concurrency:1..32*2")
	if err != nil {
		t.Fatal(err)
	}
	sum, out := stagedRun(t, s.URL(), &StagePlan{Levels: levels, Duration: 1200 * time.Millisecond, Requests: 6, SLO: stageSLO(t), MinGoodput: 0.75})
	if len(sum.Stages) != 6 {
		t.Fatalf("%d stages, want 6", len(sum.Stages))
	}
	highest := 0
	for i, st := range sum.Stages {
		want := report.StageMisses
		if st.Concurrency <= 2 {
			want = report.StageMeets
			highest = st.Concurrency
		}
		if st.Index != i || st.Concurrency != 1<<i || st.Verdict != want {
			t.Errorf("stage %d: index %d concurrency %d verdict %q (goodput %+v), want %d %q", i, st.Index, st.Concurrency, st.Verdict, st.Goodput, 1<<i, want)
		}
	}
	if highest != 2 {
		t.Errorf("highest stage meeting the SLO: %d, want the capacity 2", highest)
	}
	perStage := map[int]int{}
	for _, r := range liveRecords(t, out) {
		if r.Stage == nil {
			t.Fatalf("record without a stage: %+v", r)
		}
		if r.Stage.Concurrency != 1<<r.Stage.Index {
			t.Errorf("record of stage %d at concurrency %d", r.Stage.Index, r.Stage.Concurrency)
		}
		perStage[r.Stage.Index]++
	}
	for i, st := range sum.Stages {
		if uint64(perStage[i]) != st.Requests {
			t.Errorf("stage %d: %d records, figures of %d", i, perStage[i], st.Requests)
		}
	}
}

// TestUntilSLOBisects: --until-slo stops at the first stage that misses
// (4), then bisects between 2 and 4 (3) down to a resolution of one
// session: the capacity, 2.
func TestUntilSLOBisects(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of six stages takes seconds")
	}
	t.Parallel()
	s := capacityServer(t)
	levels, err := pace.ParseStages("concurrency:1..32*2")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := stagedRun(t, s.URL(), &StagePlan{Levels: levels, Duration: 1200 * time.Millisecond, Requests: 6, SLO: stageSLO(t), MinGoodput: 0.75, UntilSLO: true})
	var ran []int
	for _, st := range sum.Stages {
		ran = append(ran, st.Concurrency)
	}
	if got := fmt.Sprint(ran); got != "[1 2 4 3]" {
		t.Errorf("stages ran at %s, want [1 2 4 3]", got)
	}
	if r := sum.Search; r == nil || *r != (pace.Result{Highest: 2, OK: true, Lowest: 3, Missed: true}) {
		t.Errorf("search found %+v, want the capacity 2 (3 missed)", r)
	}
}
