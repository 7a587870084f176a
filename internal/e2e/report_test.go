package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureLiveReport runs probe | compose | send --url | measure with
// the performance flags against the test server failing some requests,
// then compares the summary with itself: every output names the failures
// by kind, and a dry run of the same conversations has no performance.
func TestMeasureLiveReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{TTFT: 20 * time.Millisecond, TokensPerSecond: 1000,
		FaultRate: 0.3, Faults: []string{testserver.Fault500}, Seed: 5})
	dir := t.TempDir()
	sum, page := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	// send exits 1 when requests failed, which they do here: the
	// pipeline's status is measure's.
	pipeline := `"$0/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
	  | "$0/compose" --isl 200 --osl 8 --conversations 10 --turns 2 --seed 1 --model m \
	  | "$0/send" $1 \
	  | "$0/measure" --apply-chat-template --summary --summary-json "$2" --report "$3" --slo ttft=5s,e2e=10s --percentiles 25,99.9 >/dev/null`
	cmd := exec.Command("bash", "-c", pipeline, bin, "--url "+srv.URL()+" --concurrency 4", sum, page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pipeline: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var s struct {
		Performance *struct {
			Requests  int            `json:"requests"`
			Succeeded int            `json:"succeeded"`
			Failed    int            `json:"failed"`
			Errors    map[string]int `json:"errors"`
			TTFT      map[string]any `json:"ttft_ms"`
			Goodput   *struct {
				Requests int `json:"requests"`
			} `json:"goodput"`
		} `json:"performance"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	p := s.Performance
	injected := srv.Faults()[testserver.Fault500]
	if p == nil || p.Requests != 20 || p.Failed != injected || p.Errors["http_5xx"] != injected || injected == 0 || p.Goodput == nil || p.Goodput.Requests != p.Succeeded {
		t.Fatalf("performance %+v; server injected %d", p, injected)
	}
	if _, ok := p.TTFT["p99.9"]; !ok {
		t.Errorf("--percentiles 99.9 missing: %v", p.TTFT)
	}
	text := stderr.String()
	html, _ := os.ReadFile(page)
	for _, out := range []string{text, string(html)} {
		if !strings.Contains(out, "http_5xx") || !strings.Contains(out, "performance: requests 20") {
			t.Errorf("output lacks the failures by kind:\n%.2000s", out)
		}
	}
	out, err := exec.Command(filepath.Join(bin, "measure"), "--compare", sum, sum).Output()
	if err != nil || !strings.Contains(string(out), "performance.request_throughput") || !strings.Contains(string(out), "1.000") {
		t.Errorf("--compare: %v\n%s", err, out)
	}

	// A dry run: no performance section.
	cmd = exec.Command("bash", "-c", pipeline, bin, "--dry-run", sum, page)
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dry run: %v\n%s", err, stderr.String())
	}
	data, _ = os.ReadFile(sum)
	s.Performance = nil
	if err := json.Unmarshal(data, &s); err != nil || s.Performance != nil || strings.Contains(stderr.String(), "performance") {
		t.Errorf("dry run has a performance section: %s\n%s", data, stderr.String())
	}
}

// Bad performance flags are refused before any work, with status 2.
func TestMeasureBadPerformanceFlags(t *testing.T) {
	bin := buildTools(t)
	for _, args := range [][]string{{"--slo", "ttft=fast"}, {"--percentiles", "101"}, {"--report", "x.svg"}, {"--compare", "only-one.json"}} {
		cmd := exec.Command(filepath.Join(bin, "measure"), args...)
		cmd.Stdin = strings.NewReader(`{"text":"hi"}` + "\n")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("%v: %v, stderr %q; want status 2 naming the flag", args, err, stderr.String())
		}
	}
}
