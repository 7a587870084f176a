package testserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/metrics/scrape"
)

// scrapeCounters reads the server's /metrics through the send's parser.
func scrapeCounters(t *testing.T, s *Server) metrics.Counters {
	t.Helper()
	resp, err := http.Get(s.URL() + PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	samples, err := scrape.Parse(resp.Body, scrape.DefaultSelection("vllm"))
	if err != nil {
		t.Fatal(err)
	}
	return metrics.CountersOf(samples)
}

// TestMetricsCounted: /metrics counts what the server served, in vLLM's
// names: the same prompt twice is 2P prompt tokens and queries, and the
// second hits the blocks of the first (⌊(P−1)/16⌋ blocks of 16: vLLM
// computes the last token); a request failed before its prompt is read
// counts nothing; the double-count fault counts its prompt twice.
func TestMetricsCounted(t *testing.T) {
	s := StartTest(t, Config{Metrics: true, PrefixCacheBlock: 16})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum dolor sit amet ", 12) + `"}],"max_tokens":3}`
	var resp struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	c := scrapeCounters(t, s)
	if c.Server != "vllm" || *c.PromptTokens != 0 || *c.Requests != 0 {
		t.Fatalf("before any request: %+v", c)
	}
	postJSON(t, s.URL(), body, nil, &resp)
	postJSON(t, s.URL(), body, nil, nil)
	postJSON(t, s.URL(), body, map[string]string{FaultHeader: Fault500}, nil)
	p := float64(resp.Usage.PromptTokens)
	if p < 40 {
		t.Fatalf("prompt %v: want a prompt of several blocks", p)
	}
	c = scrapeCounters(t, s)
	hits := float64(int(p-1) / 16 * 16)
	if *c.PromptTokens != 2*p || *c.PrefixQueries != 2*p || *c.PrefixHits != hits || *c.Requests != 2 || *c.GenerationTokens != 6 {
		t.Errorf("after two requests of %v prompt tokens: prompt %v queries %v hits %v (want %v) requests %v generation %v",
			p, *c.PromptTokens, *c.PrefixQueries, *c.PrefixHits, hits, *c.Requests, *c.GenerationTokens)
	}
	postJSON(t, s.URL(), body, map[string]string{FaultHeader: FaultDoublePromptTokens}, nil)
	if c = scrapeCounters(t, s); *c.PromptTokens != 4*p || *c.Requests != 3 {
		t.Errorf("double-count fault: prompt %v (want %v), requests %v", *c.PromptTokens, 4*p, *c.Requests)
	}
}

// TestMetricsOff: without Config.Metrics there is no /metrics.
func TestMetricsOff(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true})
	resp, err := http.Get(s.URL() + PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics without Metrics: %s", resp.Status)
	}
}
