package budget

import (
	"errors"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
)

type countFunc func(string) int

func (f countFunc) Count(s string) int { return f(s) }

var words = countFunc(func(s string) int { return len(strings.Fields(s)) })

// fakeLlama is the fake template of AIPerf's test_decomposes_fixed_and_wrap
// (§10): 4 fixed tokens (BOS 1 + generation prompt 3), 5 per message, plus
// the whitespace word count of every message.
func fakeLlama(calls *int) Renderer {
	return func(msgs []Message) (int, error) {
		*calls++
		n := 4 + 5*len(msgs)
		for _, m := range msgs {
			n += len(strings.Fields(m.Content))
		}
		return n, nil
	}
}

func TestProbeSamples(t *testing.T) {
	want := []struct {
		text         string
		chars, words int
	}{
		{"Hello, how are you today?", 25, 5},
		{"Could you write a Python function to reverse a string?", 54, 10},
		{"What's the difference between TCP and UDP in networking?", 56, 9},
	}
	got := ProbeSamples()
	for i, w := range want {
		if got[i] != w.text || len(got[i]) != w.chars || len(strings.Fields(got[i])) != w.words {
			t.Errorf("sample %d = %q", i, got[i])
		}
	}
}

func TestProbeDecomposesFixedAndWrap(t *testing.T) {
	calls := 0
	o := ProbeChatTemplate(fakeLlama(&calls), words)
	if o.Fixed != 4 || o.Wrap != 5 || o.Reason != "" {
		t.Fatalf("probe = %+v, want fixed 4 wrap 5", o)
	}
	if calls != 6 {
		t.Errorf("render called %d times, want 2 × 3 = 6", calls)
	}
	// Sample 1 from the reference: bare 5, single 14, triple 34.
	s := o.Samples[0]
	if s.Bare != 5 || s.Single != 14 || s.Triple != 34 || s.Wrap != 5 || s.Fixed != 4 {
		t.Errorf("sample 1 = %+v", s)
	}
	if len(o.Samples) != 3 || o.Samples[1].Bare != 10 || o.Samples[2].Bare != 9 {
		t.Errorf("samples = %+v", o.Samples)
	}
}

func TestProbeZeros(t *testing.T) {
	if o := ProbeChatTemplate(nil, words); o.Fixed != 0 || o.Wrap != 0 || o.Reason != "no chat template" {
		t.Errorf("nil renderer: %+v", o)
	}
	calls := 0
	raising := func([]Message) (int, error) { calls++; return 0, errors.New("no chat template") }
	o := ProbeChatTemplate(raising, words)
	if o.Fixed != 0 || o.Wrap != 0 || !strings.Contains(o.Reason, "no chat template") || calls != 1 {
		t.Errorf("raising renderer: %+v after %d calls", o, calls)
	}
	// test_returns_zeros_on_implausible_negative_wrap: apply → 1 token,
	// encode → 50, so wrap = (1 − 1 − 100)/2 = −50.
	calls = 0
	one := func([]Message) (int, error) { calls++; return 1, nil }
	o = ProbeChatTemplate(one, countFunc(func(string) int { return 50 }))
	if o.Fixed != 0 || o.Wrap != 0 || o.Reason == "" || calls != 2 {
		t.Errorf("negative wrap: %+v after %d calls", o, calls)
	}
	if len(o.Samples) != 1 || o.Samples[0].Wrap != -50 {
		t.Errorf("negative wrap sample kept for the record: %+v", o.Samples)
	}
	// Negative fixed with a plausible wrap also abandons the probe.
	o = ProbeChatTemplate(func(m []Message) (int, error) { return 2 + 7*(len(m)-1), nil }, countFunc(func(string) int { return 1 }))
	// single 2, triple 16, bare 1: wrap (16−2−2)/2 = 6, fixed 2−1−6 = −5.
	if o.Fixed != 0 || o.Wrap != 0 || o.Samples[0].Fixed != -5 {
		t.Errorf("negative fixed: %+v", o)
	}
}

// table renders each sample with given (single, triple) counts; bare is 5.
func table(rows map[string][2]int) Renderer {
	return func(m []Message) (int, error) {
		r := rows[m[0].Content]
		if len(m) == 1 {
			return r[0], nil
		}
		return r[1], nil
	}
}

func TestProbeAveragesBeforeRounding(t *testing.T) {
	five := countFunc(func(string) int { return 5 })
	// Wraps 2.5, 2.5, 0 and fixeds 6.5, 6.5, 9: means 1.667 and 7.333 round
	// to (7, 2). Rounding each sample first would give wrap (2+2+0)/3 → 1.
	o := ProbeChatTemplate(table(map[string][2]int{
		ProbeSampleGreeting: {14, 29},
		ProbeSampleCode:     {14, 29},
		ProbeSampleNetwork:  {14, 24},
	}), five)
	if o.Fixed != 7 || o.Wrap != 2 {
		t.Errorf("probe = (%d, %d), want (7, 2)", o.Fixed, o.Wrap)
	}
	// Every sample: wrap 0.5, fixed 4.5. Python's round goes half to even:
	// (4, 0), where rounding half up would give (5, 1).
	o = ProbeChatTemplate(table(map[string][2]int{
		ProbeSampleGreeting: {10, 21},
		ProbeSampleCode:     {10, 21},
		ProbeSampleNetwork:  {10, 21},
	}), five)
	if o.Fixed != 4 || o.Wrap != 0 || o.Samples[0].Wrap != 0.5 || o.Samples[0].Fixed != 4.5 {
		t.Errorf("probe = %+v, want (4, 0)", o)
	}
}

func comp(marker int, slot cachebust.Slot, fixed, wrap int) Compensation {
	return Compensation{
		MarkerTokens: marker,
		Landing:      cachebust.Landing{Slot: slot, Prefix: true},
		Template:     records.TemplateOverhead{Fixed: fixed, Wrap: wrap},
	}
}

func TestAdjustments(t *testing.T) {
	c := comp(10, cachebust.FirstUserTurn, 4, 5)
	if c.FirstTurnAdjustment() != 19 || c.LaterTurnAdjustment() != 5 {
		t.Errorf("adjustments %d / %d, want 19 / 5", c.FirstTurnAdjustment(), c.LaterTurnAdjustment())
	}
	if z := comp(0, cachebust.NoSlot, 0, 0); z.FirstTurnAdjustment() != 0 || z.LaterTurnAdjustment() != 0 {
		t.Error("all-zero compensation adjusts")
	}
}

func TestTurnBudgets(t *testing.T) {
	tests := []struct {
		name         string
		c            Compensation
		isl          int
		first, later int
	}{
		{"fixed+wrap+marker", comp(10, cachebust.FirstUserTurn, 4, 5), 100, 81, 95},
		{"floor at 1", comp(10, cachebust.FirstUserTurn, 4, 5), 5, 1, 1},
		{"no compensation", comp(0, cachebust.NoSlot, 0, 0), 100, 100, 100},
		{"chat template only", comp(0, cachebust.NoSlot, 4, 5), 100, 91, 95},
		// A marker on the system prompt costs the first turn nothing.
		{"marker on system prompt", comp(10, cachebust.SharedSystemPrompt, 4, 5), 100, 91, 95},
	}
	for _, tt := range tests {
		if got := tt.c.TurnBudget(tt.isl, true); got != tt.first {
			t.Errorf("%s: first turn %d → %d, want %d", tt.name, tt.isl, got, tt.first)
		}
		if got := tt.c.TurnBudget(tt.isl, false); got != tt.later {
			t.Errorf("%s: later turn %d → %d, want %d", tt.name, tt.isl, got, tt.later)
		}
	}
}

func TestSystemPromptLength(t *testing.T) {
	if got := comp(15, cachebust.SharedSystemPrompt, 0, 0).SystemPromptLength(200); got != 185 {
		t.Errorf("200 − 15 = %d, want 185", got)
	}
	if got := comp(20, cachebust.SharedSystemPrompt, 0, 0).SystemPromptLength(5); got != 1 {
		t.Errorf("5 − 20 floors to %d, want 1", got)
	}
	if got := comp(15, cachebust.FirstUserTurn, 0, 0).SystemPromptLength(200); got != 200 {
		t.Errorf("first_turn target changed system prompt to %d", got)
	}
}

// TestRoutingCells is AIPerf's TestCacheBustMarkerRouting: a marker costing
// 10 tokens, over the 9 cells, charged where cachebust.Route lands it.
func TestRoutingCells(t *testing.T) {
	tests := []struct {
		target          cachebust.Target
		hasSystem       bool
		firstTurnMarker int
		systemPrompt200 int
	}{
		{cachebust.None, false, 0, 200},
		{cachebust.FirstTurnPrefix, false, 10, 200},
		{cachebust.FirstTurnPrefix, true, 10, 200},
		{cachebust.FirstTurnSuffix, false, 10, 200},
		{cachebust.FirstTurnSuffix, true, 10, 200},
		{cachebust.SystemPrefix, true, 0, 190},
		{cachebust.SystemSuffix, true, 0, 190},
		{cachebust.SystemPrefix, false, 10, 200},
		{cachebust.SystemSuffix, false, 10, 200},
	}
	for _, tt := range tests {
		marker := 10
		if tt.target == cachebust.None {
			marker = 0
		}
		c := Compensation{MarkerTokens: marker, Landing: cachebust.Route(tt.target, tt.hasSystem)}
		if got := c.FirstTurnAdjustment(); got != tt.firstTurnMarker {
			t.Errorf("%s system=%v: first-turn marker tokens %d, want %d", tt.target, tt.hasSystem, got, tt.firstTurnMarker)
		}
		if got := c.SystemPromptLength(200); got != tt.systemPrompt200 {
			t.Errorf("%s system=%v: system prompt %d, want %d", tt.target, tt.hasSystem, got, tt.systemPrompt200)
		}
	}
}

func TestChatTemplateBudgets(t *testing.T) {
	calls := 0
	tmpl := ProbeChatTemplate(fakeLlama(&calls), words)
	c := Compensation{Template: tmpl}
	if c.TurnBudget(100, true) != 91 || c.TurnBudget(100, false) != 95 || calls != 6 {
		t.Errorf("chat template only: %d / %d after %d renders, want 91 / 95", c.TurnBudget(100, true), c.TurnBudget(100, false), calls)
	}
	// Opt-out (TestApplyChatTemplateOptOut): no overhead, the ISL passes
	// through on every turn.
	c = Compensation{}
	if c.FirstTurnAdjustment() != 0 || c.LaterTurnAdjustment() != 0 ||
		c.TurnBudget(100, true) != 100 || c.TurnBudget(100, false) != 100 {
		t.Errorf("opt-out: %+v", c)
	}
	// Everything together: marker 10 on the first turn, template (4, 5),
	// and the floor at 1.
	c = Compensation{MarkerTokens: 10, Landing: cachebust.Route(cachebust.FirstTurnPrefix, false), Template: tmpl}
	if c.TurnBudget(100, true) != 81 || c.TurnBudget(100, false) != 95 || c.TurnBudget(5, true) != 1 {
		t.Errorf("full: %d / %d / %d", c.TurnBudget(100, true), c.TurnBudget(100, false), c.TurnBudget(5, true))
	}
}
