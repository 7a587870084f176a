package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/records"
)

// OSLTolerance is the miss a request's output may have before measure
// warns: min(Percent % of max_tokens, Tokens) tokens either way. The
// default is AIPerf's OSL mismatch threshold, min(5 %, 50 tokens).
type OSLTolerance struct {
	Percent float64 `json:"percent"`
	Tokens  int     `json:"tokens"`
}

// DefaultOSLTolerance is AIPerf's threshold.
var DefaultOSLTolerance = OSLTolerance{Percent: 5, Tokens: 50}

// ParseOSLTolerance reads --osl-tolerance: "5%,50" (the smaller of the
// two), "5%" or "50".
func ParseOSLTolerance(s string) (OSLTolerance, error) {
	t := OSLTolerance{Percent: math.Inf(1), Tokens: math.MaxInt}
	parts := strings.Split(s, ",")
	if len(parts) > 2 || s == "" {
		return t, fmt.Errorf("--osl-tolerance %q: want PERCENT%%, TOKENS or both (AIPerf's: 5%%,50)", s)
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if v, ok := strings.CutSuffix(p, "%"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= 100) {
				return t, fmt.Errorf("--osl-tolerance %q: %q is not a percentage from 0 to 100", s, p)
			}
			t.Percent = f
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return t, fmt.Errorf("--osl-tolerance %q: %q is not a token count (≥ 0) or a percentage (5%%)", s, p)
		}
		t.Tokens = n
	}
	return t, nil
}

// allowed is the miss tolerated for a target.
func (t OSLTolerance) allowed(target int) float64 {
	return math.Min(t.Percent/100*float64(target), float64(t.Tokens))
}

func (t OSLTolerance) String() string {
	var p []string
	if !math.IsInf(t.Percent, 1) {
		p = append(p, strconv.FormatFloat(t.Percent, 'f', -1, 64)+" %")
	}
	if t.Tokens != math.MaxInt {
		p = append(p, strconv.Itoa(t.Tokens)+" tokens")
	}
	if len(p) == 1 {
		return p[0]
	}
	return "min(" + strings.Join(p, ", ") + ")"
}

// MarshalJSON writes an unset side as null.
func (t OSLTolerance) MarshalJSON() ([]byte, error) {
	pct, tok := "null", "null"
	if !math.IsInf(t.Percent, 1) {
		pct = strconv.FormatFloat(t.Percent, 'f', -1, 64)
	}
	if t.Tokens != math.MaxInt {
		tok = strconv.Itoa(t.Tokens)
	}
	return []byte(`{"percent":` + pct + `,"tokens":` + tok + `}`), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *OSLTolerance) UnmarshalJSON(data []byte) error {
	var v struct {
		Percent *float64 `json:"percent"`
		Tokens  *int     `json:"tokens"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*t = OSLTolerance{Percent: math.Inf(1), Tokens: math.MaxInt}
	if v.Percent != nil {
		t.Percent = *v.Percent
	}
	if v.Tokens != nil {
		t.Tokens = *v.Tokens
	}
	return nil
}

// OSLReport is measure's output-length section: every live request with
// a max_tokens, its output as received against that target.
type OSLReport struct {
	// Requests checked, and how their bodies asked for the length
	// (exact, user, best_effort; "unknown" for records that do not say,
	// such as AIPerf's).
	Requests uint64            `json:"requests"`
	Asked    map[string]uint64 `json:"asked"`
	// Error is received − max_tokens (Exact and ExactPct: equal).
	Error ErrorStats `json:"error"`
	// Causes counts the misses by cause (records.OSL.Cause).
	Causes map[string]uint64 `json:"causes"`
	// Tolerance is --osl-tolerance; BeyondTolerance the requests that
	// missed by more.
	Tolerance       OSLTolerance `json:"tolerance"`
	BeyondTolerance uint64       `json:"beyond_tolerance"`
	// ReasoningInCount is the requests whose counted output held
	// reasoning tokens (ReasoningTokens in all): their visible answer is
	// that much shorter than the count.
	ReasoningInCount uint64 `json:"reasoning_in_count"`
	ReasoningTokens  uint64 `json:"reasoning_tokens"`
	// VsReencoded is the streamed text re-encoded with measure's
	// tokenizer − the server's count, where there were both: what a later
	// turn's history carries against what the server says it generated.
	VsReencoded ErrorStats `json:"vs_reencoded"`
	// Warning says the run missed: requests beyond the tolerance, and
	// servers that ignored the parameters they were sent.
	Warning string `json:"warning,omitempty"`
}

type oslAcc struct {
	n                  uint64
	asked, causes      map[string]uint64
	errs, reenc        hist
	beyond             uint64
	reasoning, reasTok uint64
	stoppedAskedExact  uint64
	beyondByCause      map[string]uint64
}

func (a *oslAcc) add(o *records.OSL, tol OSLTolerance) {
	if o == nil {
		return
	}
	if a.asked == nil {
		a.asked, a.causes, a.errs, a.reenc, a.beyondByCause = map[string]uint64{}, map[string]uint64{}, hist{}, hist{}, map[string]uint64{}
	}
	a.n++
	asked := o.Asked
	if asked == "" {
		asked = "unknown"
	}
	a.asked[asked]++
	a.errs.add(int64(o.Error))
	if o.Cause != records.OSLExact {
		a.causes[o.Cause]++
		if o.Cause == records.OSLStoppedEarly && o.Asked == records.OutputExact {
			a.stoppedAskedExact++
		}
	}
	if math.Abs(float64(o.Error)) > tol.allowed(o.Target) {
		a.beyond++
		a.beyondByCause[o.Cause]++
	}
	if o.Reasoning != nil && *o.Reasoning > 0 {
		a.reasoning++
		a.reasTok += uint64(*o.Reasoning)
	}
	if o.ReencodedDiff != nil {
		a.reenc.add(int64(*o.ReencodedDiff))
	}
}

func (a *oslAcc) report(tol OSLTolerance) *OSLReport {
	if a.n == 0 {
		return nil
	}
	r := &OSLReport{Requests: a.n, Asked: a.asked, Error: errorStats(a.errs), Causes: a.causes,
		Tolerance: tol, BeyondTolerance: a.beyond, ReasoningInCount: a.reasoning, ReasoningTokens: a.reasTok,
		VsReencoded: errorStats(a.reenc)}
	var w []string
	if a.beyond > 0 {
		w = append(w, fmt.Sprintf("%d of %d requests missed max_tokens by more than %s (--osl-tolerance): %s", a.beyond, a.n, tol, causeList(a.beyondByCause)))
	}
	if a.stoppedAskedExact > 0 {
		// Whatever the tolerance: the server was told and did otherwise.
		w = append(w, fmt.Sprintf("%d requests asked for exactly max_tokens (ignore_eos, min_tokens) stopped early: the server ignored those parameters", a.stoppedAskedExact))
	}
	r.Warning = strings.Join(w, "; ")
	return r
}

func causeList(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var p []string
	for _, k := range keys {
		p = append(p, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(p, ", ")
}

// lines is the section as text lines.
func (r *OSLReport) lines() []string {
	pct := 0.0
	if r.Error.ExactPct != nil {
		pct = *r.Error.ExactPct
	}
	l := []string{fmt.Sprintf("output length: %d requests, exactly max_tokens %d (%.1f %%)   asked: %s", r.Requests, r.Error.Exact, pct, causeList(r.Asked))}
	if r.Error.N > r.Error.Exact {
		l = append(l, fmt.Sprintf("  received − max_tokens: min %s, max %s, mean |error| %s; misses by cause: %s",
			optInt(r.Error.MinError), optInt(r.Error.MaxError), optFloat(r.Error.MeanAbsError), causeList(r.Causes)))
	}
	if r.ReasoningInCount > 0 {
		l = append(l, fmt.Sprintf("  reasoning tokens inside the count: %d requests, %d tokens (the visible answers are that much shorter)", r.ReasoningInCount, r.ReasoningTokens))
	}
	if v := r.VsReencoded; v.N > 0 {
		l = append(l, fmt.Sprintf("  streamed text re-encoded − server's count: %d of %d equal, min %s, max %s", v.Exact, v.N, optInt(v.MinError), optInt(v.MaxError)))
	}
	if r.Warning != "" {
		l = append(l, "warning: output length: "+r.Warning)
	}
	return l
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func optFloat(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

// writeHTML writes the section of the HTML report.
func (r *OSLReport) writeHTML(w io.Writer) {
	io.WriteString(w, "<h2>Output length</h2>\n")
	for _, l := range r.lines() {
		class := ""
		if strings.HasPrefix(l, "warning:") {
			class = ` class="bad"`
		}
		fmt.Fprintf(w, "<p%s>%s</p>\n", class, esc(l))
	}
}
