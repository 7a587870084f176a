package report_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// Test server pacing: the first token after liveTTFT, then one token
// every liveGap; liveTokens tokens per request.
const (
	liveTTFT   = 50 * time.Millisecond
	liveGap    = 5 * time.Millisecond // 200 tokens/s
	liveTokens = 10
)

// liveSummary sends convs×turns requests to srv through send (streamed),
// measures every record through measure, and returns the summary.
func liveSummary(t *testing.T, srv *testserver.Server, convs, turns int, o report.Options) *report.Summary {
	t.Helper()
	var cs []records.Conversation
	for i := range convs {
		c := records.Conversation{Kind: records.KindConversation, SchemaVersion: records.SchemaVersion, ID: fmt.Sprintf("c%d", i),
			Index: i, BenchmarkID: "live", CacheBust: cachebust.None, Landing: cachebust.Route(cachebust.None, false), Model: "m"}
		for k := range turns {
			c.Turns = append(c.Turns, records.Turn{Index: k, TargetISL: 20, Text: fmt.Sprintf("question %d of %d", k, i),
				MaxTokens: liveTokens, Assistant: "reply"})
		}
		cs = append(cs, c)
	}
	b, err := send.NewBuilder(send.PayloadOptions{Stream: true}, func(err error) { t.Errorf("dropped: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := send.Run(context.Background(), &out, cs, b, send.Config{URL: srv.URL(), Concurrency: 4, Timeout: 10 * time.Second}, send.Wiring{}); err != nil {
		t.Fatal(err)
	}
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	m := measure.New(measure.Options{Tokenizer: tok})
	s := report.NewSummaryWith(o)
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		res, err := m.Record(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Requests {
			s.AddRequest(r)
		}
	}
	return s
}

func within(t *testing.T, name string, got *float64, lo, hi float64) {
	t.Helper()
	if got == nil || *got < lo || *got > hi {
		t.Errorf("%s = %v ms, want %v..%v", name, got, lo, hi)
	} else {
		t.Logf("%s = %.2f ms", name, *got)
	}
}

// TestLiveKnownTiming runs send against the test server with a known
// TTFT and token rate and checks the summary recovers them. Timer sleeps
// never end early, so lower bounds are tight; upper bounds allow a loaded
// 2-core machine's scheduling delay under -race (40 ms on a 50 ms TTFT,
// 15 ms on a 5 ms gap), so CI cannot flake on them.
func TestLiveKnownTiming(t *testing.T) {
	srv := testserver.StartTest(t, testserver.Config{NoTokenize: true, TTFT: liveTTFT, TokensPerSecond: float64(time.Second / liveGap)})
	const convs, turns = 6, 2
	slo, _ := report.ParseSLO("ttft=10s,e2e=20s")
	s := liveSummary(t, srv, convs, turns, report.Options{SLO: slo})
	r := s.Report()
	p := r.Performance
	if p == nil {
		t.Fatal("no performance section")
	}
	n := uint64(convs * turns)
	if p.Requests != n || p.Succeeded != n || p.Failed != 0 || p.Streamed != n || len(p.Errors) != 0 {
		t.Fatalf("requests %d succeeded %d failed %d streamed %d errors %v", p.Requests, p.Succeeded, p.Failed, p.Streamed, p.Errors)
	}
	if p.OutputTokens != n*liveTokens {
		t.Errorf("output tokens %d, want %d", p.OutputTokens, n*liveTokens)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	within(t, "ttft p50", p.TTFT.Get(50), ms(liveTTFT)-1, ms(liveTTFT)+40)
	within(t, "ttft min", p.TTFT.Min, ms(liveTTFT)-1, ms(liveTTFT)+40)
	// The server paces tokens against a schedule: 9 gaps of 5 ms between
	// the 10 tokens, and one more before the end of the stream, so
	// e2e ≈ ttft + 10 gaps and tpot ≈ 10·5/9 ms.
	within(t, "itl mean", p.ITL.Mean, ms(liveGap)-1, ms(liveGap)+15)
	within(t, "tpot p50", p.TPOT.Get(50), ms(liveGap)*10/9-1, ms(liveGap)*10/9+15)
	within(t, "e2e p50", p.E2E.Get(50), ms(liveTTFT+10*liveGap)-1, ms(liveTTFT+10*liveGap)+80)
	if p.ITL.N != n*(liveTokens-1) {
		t.Errorf("itl n=%d, want %d gaps", p.ITL.N, n*(liveTokens-1))
	}
	// Throughput follows from the duration, itself at least the time the
	// 12 requests need 4 at a time (3 waves of ≥ 100 ms).
	if p.DurationS < 0.3 {
		t.Errorf("duration %v s, want ≥ 0.3", p.DurationS)
	}
	if got, want := p.RequestThroughput, float64(n)/p.DurationS; got != want {
		t.Errorf("request throughput %v, want %v", got, want)
	}
	if p.PeakConcurrency < 1 || p.PeakConcurrency > 4 || p.MeanConcurrency > 4 {
		t.Errorf("concurrency peak %d mean %v, want ≤ 4", p.PeakConcurrency, p.MeanConcurrency)
	}
	if p.Goodput == nil || p.Goodput.Requests != n {
		t.Errorf("goodput %+v, want every request under generous SLOs", p.Goodput)
	}
	if len(p.ByTurn) != turns || p.ByTurn[1].Requests != convs {
		t.Errorf("by turn %+v", p.ByTurn)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
}

// TestLiveFailuresByKind: with the server failing some requests, the
// summary's errors are exactly the faults it injected, in every output.
func TestLiveFailuresByKind(t *testing.T) {
	srv := testserver.StartTest(t, testserver.Config{NoTokenize: true, FaultRate: 0.4, Faults: []string{testserver.Fault500, testserver.Fault429}, Seed: 3})
	s := liveSummary(t, srv, 20, 1, report.Options{})
	p := s.Report().Performance
	f := srv.Faults()
	want := map[string]uint64{}
	if n := f[testserver.Fault500]; n > 0 {
		want[records.ErrHTTP5xx] = uint64(n)
	}
	if n := f[testserver.Fault429]; n > 0 {
		want[records.ErrRateLimited] = uint64(n)
	}
	if len(want) != 2 {
		t.Fatalf("the seed did not inject both faults: %v", f)
	}
	if fmt.Sprint(p.Errors) != fmt.Sprint(want) || p.Failed != want[records.ErrHTTP5xx]+want[records.ErrRateLimited] || p.Succeeded+p.Failed != 20 {
		t.Errorf("errors %v failed %d succeeded %d; server injected %v", p.Errors, p.Failed, p.Succeeded, f)
	}
	var text, page bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	kinds := fmt.Sprintf("failed %d (http_5xx %d, rate_limited %d)", p.Failed, want[records.ErrHTTP5xx], want[records.ErrRateLimited])
	for name, out := range map[string]string{"text": text.String(), "report": page.String()} {
		if !strings.Contains(out, kinds) {
			t.Errorf("%s lacks %q:\n%s", name, kinds, out)
		}
	}
}
