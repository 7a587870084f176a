package send

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/metrics/scrape"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/pace"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// splitKinds parses a live run's output into its request and metrics
// records, in order, and the kinds line by line.
func splitKinds(t *testing.T, out *bytes.Buffer) (reqs []records.Request, ms []records.Metrics, kinds []string) {
	t.Helper()
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var head struct{ Kind string }
		if err := json.Unmarshal(l, &head); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		kinds = append(kinds, head.Kind)
		switch head.Kind {
		case records.KindMetrics:
			testutil.ValidateSchema(t, "metrics.schema.json", l)
			var m records.Metrics
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		case records.KindRequest:
			var r records.Request
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, r)
		default:
			t.Fatalf("unexpected record %s", l)
		}
	}
	return reqs, ms, kinds
}

// TestScrapeBracketsTheRun: one sample before the first request and one
// after the last, so their difference is the run: the test server's
// prompt-token counter rises by exactly Σ usage.prompt_tokens and its
// finished-request counter by the requests sent.
func TestScrapeBracketsTheRun(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{Metrics: true})
	var out bytes.Buffer
	_, err := Run(context.Background(), &out, dataset(3, 2), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 2, Timeout: time.Minute, Scrape: ScrapeConfig{URL: s.URL() + "/metrics", Interval: time.Hour}}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	reqs, ms, kinds := splitKinds(t, &out)
	if len(reqs) != 6 || len(ms) != 2 || kinds[0] != records.KindMetrics || kinds[len(kinds)-1] != records.KindMetrics {
		t.Fatalf("kinds %v: want a metrics record first and last around 6 requests", kinds)
	}
	sum := 0
	for _, r := range reqs {
		sum += *r.Result.Usage.PromptTokens
	}
	a, b := metrics.CountersOf(ms[0].Samples), metrics.CountersOf(ms[1].Samples)
	if *a.PromptTokens != 0 || *b.PromptTokens != float64(sum) || *b.Requests != 6 || sum == 0 {
		t.Errorf("prompt counter %v → %v, requests → %v; want 0 → %d, 6", *a.PromptTokens, *b.PromptTokens, *b.Requests, sum)
	}
	if ms[0].URL != s.URL()+"/metrics" || ms[1].ElapsedNs <= ms[0].ElapsedNs || ms[0].Stage != nil {
		t.Errorf("samples: %+v / %+v", ms[0], ms[1])
	}
}

// TestScrapeStageAndSeries: the stage hook stamps every sample, and
// --metrics-series keeps only what it names.
func TestScrapeStageAndSeries(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, Metrics: true})
	sel, err := scrape.ParseSelection("vllm:num_requests_*")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	stage := &records.Stage{Index: 2, Concurrency: 4}
	_, err = Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Scrape: ScrapeConfig{URL: s.URL() + "/metrics", Series: &sel}},
		Wiring{Stage: func() *records.Stage { return stage }})
	if err != nil {
		t.Fatal(err)
	}
	_, ms, _ := splitKinds(t, &out)
	for _, m := range ms {
		if m.Stage == nil || *m.Stage != *stage || len(m.Samples) != 2 ||
			m.Samples[0].Name != "vllm:num_requests_running" || m.Samples[1].Name != "vllm:num_requests_waiting" {
			t.Errorf("sample %+v", m)
		}
	}
}

// TestScrapeFailures: an automatic scrape of a server without /metrics
// turns itself off and says why; an explicit URL that fails fails the
// run before any request; a scrape failing mid-run is a record with its
// error.
func TestScrapeFailures(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Scrape: ScrapeConfig{URL: scrape.URLNextTo(s.URL()), Auto: true}}, Wiring{})
	if err != nil || !strings.Contains(sum.ScrapeOff, "HTTP 404 Not Found") || strings.Contains(out.String(), records.KindMetrics) {
		t.Errorf("auto without /metrics: %v, off %q, output %s", err, sum.ScrapeOff, out.String())
	}
	out.Reset()
	_, err = Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Scrape: ScrapeConfig{URL: s.URL() + "/metrics"}}, Wiring{})
	if err == nil || !strings.Contains(err.Error(), "--scrape-metrics "+s.URL()+"/metrics: HTTP 404") || s.Requests() != 1 {
		t.Errorf("explicit URL without /metrics: %v (server saw %d requests, the auto run's one)", err, s.Requests())
	}
	// The metrics server goes away after the first sample.
	ms := testserver.StartTest(t, testserver.Config{NoTokenize: true, Metrics: true})
	out.Reset()
	_, err = Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Scrape: ScrapeConfig{URL: ms.URL() + "/metrics"}},
		Wiring{Stage: func() *records.Stage { ms.Close(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, got, _ := splitKinds(t, &out)
	if len(got) != 2 || got[0].Error != "" || got[1].Error == "" || got[1].Samples != nil {
		t.Errorf("a failed last scrape: %+v", got)
	}
}

func TestScrapeConfigRefused(t *testing.T) {
	for _, c := range []ScrapeConfig{{URL: "ftp://h/metrics"}, {URL: "http://h/metrics", Interval: time.Millisecond}, {URL: "nohost"}} {
		o := Config{URL: "http://h", Timeout: time.Second, Scrape: c}
		if _, err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestScrapeEveryInterval: between the first and the last sample, one
// every interval: a run of one 600 ms request sampled every 100 ms has
// samples between the two (one is enough to pass: the assert does not
// time the ticker), in time order.
func TestScrapeEveryInterval(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, Metrics: true, TTFT: 600 * time.Millisecond})
	var out bytes.Buffer
	_, err := Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Scrape: ScrapeConfig{URL: s.URL() + "/metrics", Interval: 100 * time.Millisecond}}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	_, ms, kinds := splitKinds(t, &out)
	if len(ms) < 3 || kinds[0] != records.KindMetrics || kinds[len(kinds)-1] != records.KindMetrics {
		t.Fatalf("kinds %v: want samples during the request too", kinds)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].ElapsedNs <= ms[i-1].ElapsedNs {
			t.Errorf("sample %d at %d ns, after %d", i, ms[i].ElapsedNs, ms[i-1].ElapsedNs)
		}
	}
	// The request was running during the middle samples.
	running := false
	for _, m := range ms[1 : len(ms)-1] {
		for _, x := range m.Samples {
			running = running || (x.Name == "vllm:num_requests_running" && x.Value == 1)
		}
	}
	if !running {
		t.Errorf("no sample saw the request running: %+v", ms)
	}
}

// TestScrapeStageEnds: a staged run takes a sample as each stage ends,
// stamped with it, after the stage's requests: the server's counters
// split by stage (the periodic samples are kept out by a long interval).
func TestScrapeStageEnds(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, Metrics: true})
	levels, err := pace.ParseStages("concurrency:1,2")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = Run(context.Background(), &out, dataset(6, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Timeout: time.Minute, Stages: &StagePlan{Levels: levels, Requests: 2},
			Scrape: ScrapeConfig{URL: s.URL() + "/metrics", Interval: time.Hour}}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	reqs, ms, _ := splitKinds(t, &out)
	if len(reqs) != 4 || len(ms) != 4 {
		t.Fatalf("%d requests and %d samples, want 4 and 4 (start, two stage ends, end)", len(reqs), len(ms))
	}
	for i, want := range []*records.Stage{nil, {Index: 0, Concurrency: 1}, {Index: 1, Concurrency: 2}, nil} {
		got := ms[i].Stage
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("sample %d: stage %+v, want %+v", i, got, want)
		}
	}
	// The server counted each stage's two requests by its end.
	for i, want := range []float64{0, 2, 4, 4} {
		if got := *metrics.CountersOf(ms[i].Samples).Requests; got != want {
			t.Errorf("sample %d: %v requests counted, want %v", i, got, want)
		}
	}
}
