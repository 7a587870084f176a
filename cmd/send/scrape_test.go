package main

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
)

// TestScrapeMetricsFlags: by default (auto) a live run samples the
// /metrics next to --url, first and last among the records; a server
// without one is said on stderr and the run goes on; off scrapes
// nothing; the scrape flags are refused where they mean nothing.
func TestScrapeMetricsFlags(t *testing.T) {
	in := writeInput(t, convLine)
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, Metrics: true})
	code, out, errs := runCLI("--url", s.URL(), "--metrics-series", "vllm:request_success", in)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	metricsKind := `{"kind":"` + records.KindMetrics + `"`
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], metricsKind) || !strings.HasPrefix(lines[2], metricsKind) ||
		!strings.Contains(lines[2], `"name":"vllm:request_success_total"`) || strings.Contains(lines[2], "vllm:prompt_tokens") {
		t.Errorf("auto: exit %d, stderr %q, records\n%s", code, errs, out)
	}
	if code, out, _ := runCLI("--url", s.URL(), "--scrape-metrics", "off", in); code != 0 || strings.Contains(out, records.KindMetrics) {
		t.Errorf("off: exit %d\n%s", code, out)
	}
	bare := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	code, out, errs = runCLI("--url", bare.URL(), in)
	if code != 0 || strings.Contains(out, records.KindMetrics) || !strings.Contains(errs, "send: note: no metrics at "+bare.URL()+"/metrics (HTTP 404 Not Found)") {
		t.Errorf("auto without /metrics: exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, args := range [][]string{
		{"--url", s.URL(), "--scrape-metrics", "off", "--scrape-interval", "1s", in},
		{"--url", s.URL(), "--metrics-series", "vllm:*x", in},
		{"--url", s.URL(), "--scrape-interval", "1ms", in},
		{"--url", s.URL(), "--scrape-metrics", "ftp://h/metrics", in},
		{"--dry-run", "--scrape-metrics", "off", in},
	} {
		if code, _, errs := runCLI(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errs)
		}
	}
	if code, _, errs := runCLI("--url", s.URL(), "--scrape-metrics", bare.URL()+"/metrics", in); code != 1 || !strings.Contains(errs, "--scrape-metrics "+bare.URL()+"/metrics: HTTP 404") {
		t.Errorf("an explicit URL that fails: exit %d, stderr %q", code, errs)
	}
}
