package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// witnessRun sends testdata/witness_convs.jsonl (compose --isl 300
// --conversations 8 --prefix-groups 2 --prefix-length 128
// --cache-block-size 16: every request's cached tokens are expected)
// to a test server with /metrics and its prefix cache, scraping it, and
// measures the records: the summary's witness, the text summary, the
// server's own counters and the records measure wrote.
func witnessRun(t *testing.T, cfg testserver.Config) (metrics.Witness, string, testserver.Counters, string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "witness_convs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	convs, err := send.ReadConversations(f, "witness_convs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics, cfg.PrefixCacheBlock = true, 16
	srv := testserver.StartTest(t, cfg)
	b, err := send.NewBuilder(send.PayloadOptions{Stream: true, MaxTokensField: "max_tokens", ExactOSL: true}, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// One session at a time: the server's cache sees the requests in the
	// order send predicted them.
	_, err = send.Run(context.Background(), &out, convs, b, send.Config{URL: srv.URL(), Concurrency: 1, Timeout: time.Minute,
		Scrape: send.ScrapeConfig{URL: srv.URL() + "/metrics", Interval: time.Hour}}, send.Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	sumPath := filepath.Join(t.TempDir(), "summary.json")
	reportPath := filepath.Join(filepath.Dir(sumPath), "report.html")
	code, measured, errs := runCLI(out.String(), "--summary", "--summary-json", sumPath, "--report", reportPath)
	if code != 0 {
		t.Fatalf("measure: exit %d: %s", code, errs)
	}
	page, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	// The scraped series beside the client's: the server's requests
	// running against the client's in flight, its generation-token rate
	// against the client's output tokens/s.
	for _, want := range []string{"<h2>" + report.TitleServerMetrics + "</h2>", "Requests: server running and waiting, client in flight",
		">server running<", ">client in flight<", "Generation tokens/s: server counter, client output", "Prompt tokens/s (server counter)", ">prefix-cache hits<", "TTFT: server histogram mean per interval, client mean"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	data, err := os.ReadFile(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var sum struct {
		ServerMetrics struct {
			Witnesses []metrics.Witness `json:"witnesses"`
			Series    []struct {
				Name string `json:"name"`
			} `json:"series"`
		} `json:"server_metrics"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.ServerMetrics.Witnesses) != 1 || len(sum.ServerMetrics.Series) == 0 {
		t.Fatalf("server_metrics: %s", data)
	}
	return sum.ServerMetrics.Witnesses[0], errs, srv.Counters(), measured
}

// TestWitnessAgrees: a live run against the test server, scraped: the
// server's prompt-token counter rose by exactly Σ usage.prompt_tokens,
// its prefix-cache hits by exactly Σ expected_cached_tokens, its
// finished requests by the 8 sent, and each equals the test server's own
// counters; measure writes both metrics records back.
func TestWitnessAgrees(t *testing.T) {
	w, text, srv, measured := witnessRun(t, testserver.Config{})
	if w.Verdict != metrics.VerdictAgrees || w.Foreign != 0 || w.Scrapes != 2 {
		t.Fatalf("witness %+v", w)
	}
	if w.PromptTokens.Server != float64(srv.PromptTokens) || w.PromptTokens.Client != srv.PromptTokens || srv.PromptTokens < 8*300 {
		t.Errorf("prompt tokens: witness %+v, server counted %d", w.PromptTokens, srv.PromptTokens)
	}
	// Two groups of four share 128 tokens: 6 requests find 8 blocks of 16.
	if w.PrefixCacheHits == nil || w.PrefixCacheHits.Server != float64(srv.PrefixHits) || w.PrefixCacheHits.Client != srv.PrefixHits || srv.PrefixHits < 6*128 {
		t.Errorf("prefix-cache hits: witness %+v, server counted %d", w.PrefixCacheHits, srv.PrefixHits)
	}
	if w.Requests.Server != 8 || w.Requests.Client != 8 || srv.Finished != 8 || w.GenerationTokens.Server != float64(srv.GenerationTokens) || !w.GenerationTokens.Agrees {
		t.Errorf("requests %+v, generation %+v, server finished %d", w.Requests, w.GenerationTokens, srv.Finished)
	}
	if !strings.Contains(text, "the second witness agrees") {
		t.Errorf("text summary lacks the witness: %s", text)
	}
	if n := strings.Count(measured, `"kind":"`+records.KindMetrics+`"`); n != 2 {
		t.Errorf("measure wrote %d metrics records back, want 2", n)
	}
}

// TestWitnessCatchesDoubleCount: the test server's /metrics counts every
// prompt twice (fault double_prompt_tokens on every request): the
// witness flags the prompt-token counter with its size, Σ
// usage.prompt_tokens, and names it in the text summary.
func TestWitnessCatchesDoubleCount(t *testing.T) {
	w, text, srv, _ := witnessRun(t, testserver.Config{FaultRate: 1, Faults: []string{testserver.FaultDoublePromptTokens}})
	p := w.PromptTokens
	if w.Verdict != metrics.VerdictMismatch || p.Agrees || p.Server != float64(srv.PromptTokens) || p.Server != 2*float64(p.Client) || p.Difference != float64(p.Client) || p.Client < 8*300 {
		t.Fatalf("witness %+v, prompt %+v, server counted %d", w, p, srv.PromptTokens)
	}
	if !w.PrefixCacheHits.Agrees || !w.Requests.Agrees {
		t.Errorf("only the prompt counter is wrong: %+v", w)
	}
	want := fmt.Sprintf("vllm prompt-token counter rose by %d, Σ usage.prompt_tokens is %d: server +%d", 2*p.Client, p.Client, p.Client)
	if !strings.Contains(text, "MISMATCH") || !strings.Contains(text, want) {
		t.Errorf("text summary lacks %q: %s", want, text)
	}
}

// TestMetricsRecordWrittenBack: a metrics record measure cannot read (a
// field of a newer send) is written back as it came, its line named on
// stderr, and the run fails; a good one passes through unchanged.
func TestMetricsRecordWrittenBack(t *testing.T) {
	good := `{"kind":"islkit.metrics","schema_version":1,"url":"http://h/metrics","time":"2026-01-01T00:00:00Z","elapsed_ns":5,"samples":[{"name":"vllm:prompt_tokens_total","value":3}]}`
	bad := `{"kind":"islkit.metrics","schema_version":1,"url":"http://h/metrics","time":"2026-01-01T00:00:01Z","elapsed_ns":6,"samples":[{"name":"x","value":"3"}]}`
	testutil.ValidateSchema(t, "metrics.schema.json", []byte(good))
	code, out, errs := runCLI(good + "\n" + bad + "\n")
	if code != 1 || out != good+"\n"+bad+"\n" || !strings.Contains(errs, "<stdin>:2") || !strings.Contains(errs, `field "samples.0.value"`) {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errs)
	}
}
