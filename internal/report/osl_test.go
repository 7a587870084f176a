package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

func oslRec(target, received int, cause, asked string, reasoning, reencDiff *int) records.ISL {
	r := rec(100, ip(100), nil, nil)
	r.OSL = &records.OSL{Target: target, Asked: asked, Received: received, ReceivedFrom: "server",
		Error: received - target, Server: ip(received), Reasoning: reasoning, ReencodedDiff: reencDiff, Cause: cause}
	return r
}

// TestOSLSection: the summary's output-length section counts exact
// requests, splits the misses by cause, warns beyond AIPerf's threshold
// min(5 %, 50 tokens) (worked out by hand below), and says when a server
// ignored the exact-length parameters it was sent.
func TestOSLSection(t *testing.T) {
	s := NewAccumulator()
	s.Add(oslRec(200, 200, records.OSLExact, records.OutputExact, ip(30), ip(-3)))
	s.Add(oslRec(200, 190, records.OSLStoppedEarly, records.OutputExact, nil, ip(0)))   // 10 ≤ 5 % of 200: within
	s.Add(oslRec(200, 189, records.OSLStoppedEarly, records.OutputExact, nil, nil))     // 11 > 10: beyond
	s.Add(oslRec(2000, 1951, records.OSLLengthCut, records.OutputBestEffort, nil, nil)) // 49 ≤ 50: within
	s.Add(oslRec(2000, 1949, records.OSLLengthCut, records.OutputBestEffort, nil, nil)) // 51 > 50: beyond
	data := validate(t, s)
	var got struct {
		OSL OSLReport `json:"osl"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	o := got.OSL
	if o.Requests != 5 || o.Error.Exact != 1 || o.BeyondTolerance != 2 || o.ReasoningInCount != 1 || o.ReasoningTokens != 30 {
		t.Errorf("section %+v", o)
	}
	if o.Causes[records.OSLStoppedEarly] != 2 || o.Causes[records.OSLLengthCut] != 2 || len(o.Causes) != 2 {
		t.Errorf("causes %v", o.Causes)
	}
	if o.Asked["exact"] != 3 || o.Asked["best_effort"] != 2 {
		t.Errorf("asked %v", o.Asked)
	}
	if o.VsReencoded.N != 2 || o.VsReencoded.Exact != 1 {
		t.Errorf("vs_reencoded %+v", o.VsReencoded)
	}
	if !strings.Contains(o.Warning, "2 of 5") || !strings.Contains(o.Warning, "2 requests asked for exactly max_tokens") {
		t.Errorf("warning %q", o.Warning)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	if !strings.Contains(text.String(), "warning: output length: 2 of 5 requests") {
		t.Errorf("text summary lacks the warning:\n%s", text.String())
	}

	var page bytes.Buffer
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>Output length</h2>") || !strings.Contains(page.String(), `<p class="bad">warning: output length: 2 of 5 requests`) {
		t.Error("the HTML report lacks the output-length section or its warning")
	}

	// Within the tolerance, no warning; no OSL records, no section.
	s = NewAccumulator()
	s.Add(oslRec(200, 190, records.OSLStoppedEarly, records.OutputBestEffort, nil, nil))
	if r := s.Report(); r.OSL == nil || r.OSL.Warning != "" {
		t.Errorf("within tolerance: %+v", r.OSL)
	}
	// Asked exact, stopped early within the tolerance: still flagged.
	s.Add(oslRec(200, 199, records.OSLStoppedEarly, records.OutputExact, nil, nil))
	if r := s.Report(); !strings.Contains(r.OSL.Warning, "1 requests asked for exactly max_tokens") {
		t.Errorf("ignored min_tokens not flagged: %q", r.OSL.Warning)
	}
	if r := NewAccumulator(); r.Report().OSL != nil {
		t.Error("a section without OSL records")
	}
}

func TestParseOSLTolerance(t *testing.T) {
	for in, want := range map[string]float64{"5%,50": 10, "5%": 10, "50": 50, "1%,5": 2} { // allowed(200)
		tol, err := ParseOSLTolerance(in)
		if err != nil || tol.allowed(200) != want {
			t.Errorf("%q: allowed(200) = %v, %v; want %v", in, tol.allowed(200), err, want)
		}
	}
	for _, bad := range []string{"", "x", "5%,50,1", "-1", "101%"} {
		if _, err := ParseOSLTolerance(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
