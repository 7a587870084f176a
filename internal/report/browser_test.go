package report

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's chromium; `make test` installs it when absent.
// Without it the test skips, unless ISLKIT_REQUIRE_BROWSER is set.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("ISLKIT_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium not found and ISLKIT_REQUIRE_BROWSER is set")
	}
	t.Skip("chromium not installed (apt-get install -y chromium, or `make browser`): the HTML report is not checked in a browser")
	return ""
}

// runChromium runs headless chromium on page with extra flags and returns
// its stdout.
func runChromium(t *testing.T, bin, page string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", flags, err, stderr.String())
	}
	return stdout.Bytes()
}

// colourPixels counts the pixels within 24 per channel of c.
func colourPixels(img image.Image, c [3]int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			px := [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
			ok := true
			for i := range px {
				if d := px[i] - c[i]; d > 24 || d < -24 {
					ok = false
				}
			}
			if ok {
				n++
			}
		}
	}
	return n
}

// TestReportInBrowser renders the HTML report of a live run with failures
// in headless Chromium (no JavaScript needed: the page has none) and
// checks that the screenshot shows the charts and the page has every
// figure's title. ISLKIT_SCREENSHOT_DIR keeps the screenshot for a look.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	slo, _ := ParseSLO("ttft=150ms,tpot=500ms")
	s := handRun(Options{SLO: slo})
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := s.WriteReport(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	runChromium(t, bin, page, "--window-size=1200,2400", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("ISLKIT_SCREENSHOT_DIR"); d != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(d, "report.png"), data, 0o644)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 2000 {
		t.Fatalf("screenshot %v", b)
	}
	// Not blank: some dark text, and each chart colour drawn (TTFT CDF
	// blue, TPOT green, E2E orange, ISL hits green, failures red).
	total := b.Dx() * b.Dy()
	if dark := colourPixels(img, [3]int{33, 33, 33}); dark < total/500 {
		t.Errorf("only %d dark pixels of %d: no text?", dark, total)
	}
	for name, c := range map[string][3]int{"ttft blue": {0x1f, 0x77, 0xb4}, "tpot green": {0x2c, 0xa0, 0x2c},
		"e2e orange": {0xd9, 0x5f, 0x02}, "ISL exact green": {0x2e, 0x7d, 0x32}, "failure red": {0xc6, 0x28, 0x28}} {
		if n := colourPixels(img, c); n < 30 {
			t.Errorf("%s: %d pixels in the screenshot, want a drawn series", name, n)
		}
	}
	dom := string(runChromium(t, bin, page, "--dump-dom"))
	for _, title := range []string{TitleKeyFigures, TitleCDF, TitleTTFTvsISL, TitleThroughput, TitleConcurrent, TitleISLErrors, TitleTables,
		"TTFT CDF (n=4)", "E2E latency CDF (n=4)", "Output tokens/s per 50 ms bin", "Requests in flight", "ISL error histogram by turn",
		"failed 2 (http_5xx 1, timeout 1)"} {
		if !strings.Contains(dom, title) {
			t.Errorf("the rendered page lacks %q", title)
		}
	}
	if n := strings.Count(dom, "<svg"); n < 5 {
		t.Errorf("%d SVG figures in the rendered page, want 5", n)
	}
	checkParetoInBrowser(t, bin, dir)
}

// checkParetoInBrowser renders the report of a staged run and the
// comparison page of two: the Pareto plot is drawn (its points' colours
// in the screenshot) and every stage's point is an element of the
// rendered page, for each figure and sweep.
func checkParetoInBrowser(t *testing.T, bin, dir string) {
	t.Helper()
	slo, _ := ParseSLO("ttft=150ms,tpot=400ms")
	acc := stagedRun(Options{SLO: slo})
	var buf bytes.Buffer
	if err := acc.WriteReport(&buf); err != nil {
		t.Fatal(err)
	}
	summary, err := json.Marshal(acc.Report())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, summary, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cmp bytes.Buffer
	if err := ComparePage(&cmp, a, b); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string][]byte{"stages.html": buf.Bytes(), "compare.html": cmp.Bytes()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		dom := string(runChromium(t, bin, path, "--dump-dom"))
		sweeps := []string{"0"}
		if name == "compare.html" {
			sweeps = []string{"0", "1"}
		}
		for _, sw := range sweeps {
			for _, st := range []string{"0", "1", "2"} {
				for _, fig := range []string{"ttft_p50", "ttft_p99", "itl_p50", "itl_p99"} {
					if !strings.Contains(dom, `data-sweep="`+sw+`" data-stage="`+st+`" data-figure="`+fig+`"`) {
						t.Errorf("%s: no %s point of sweep %s stage %s in the rendered page", name, fig, sw, st)
					}
				}
			}
		}
		if !strings.Contains(dom, TitleStages) || !strings.Contains(dom, "TTFT against output tokens/s") {
			t.Errorf("%s: the rendered page lacks the Pareto plot", name)
		}
		shot := filepath.Join(dir, strings.TrimSuffix(name, ".html")+".png")
		runChromium(t, bin, path, "--window-size=1200,4200", "--screenshot="+shot)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d := os.Getenv("ISLKIT_SCREENSHOT_DIR"); d != "" {
			data, _ := os.ReadFile(shot)
			_ = os.WriteFile(filepath.Join(d, filepath.Base(shot)), data, 0o644)
		}
		bd := img.Bounds()
		if dark := colourPixels(img, [3]int{33, 33, 33}); dark < bd.Dx()*bd.Dy()/1000 {
			t.Errorf("%s: only %d dark pixels: blank?", name, dark)
		}
		// The p50 points (filled) and the SLO lines.
		cols := map[string][3]int{"p50 blue": {0x1f, 0x77, 0xb4}, "SLO red": {0xc6, 0x28, 0x28}}
		if name == "compare.html" {
			cols["B p50 orange"] = [3]int{0xd9, 0x5f, 0x02}
		}
		for what, c := range cols {
			if n := colourPixels(img, c); n < 30 {
				t.Errorf("%s: %s: %d pixels, want the series drawn", name, what, n)
			}
		}
	}
}
