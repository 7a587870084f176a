package compose

import (
	"context"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/jsonl"
)

// qwen3Context is the embedded Qwen3's model_max_length
// (tokenizer_config.json).
const qwen3Context = 131072

// TestISLAboveContextRefused: an --isl the model cannot take is refused
// unless --allow-over-context, and an absurd one is refused whatever the
// model, before any text is grown (issue 11, item 9).
func TestISLAboveContextRefused(t *testing.T) {
	p, m := fakeProbe(t, cachebust.None, 0, 0, 0)
	p.MarkerTokens = 0
	o := opts(qwen3Context + 1)
	_, err := New(p, m, "", o)
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), "131072") || !strings.Contains(err.Error(), "--allow-over-context") {
		t.Errorf("--isl %d: %v, want a usage error naming the context length and the flag", o.ISL, err)
	}
	o.AllowOverContext = true
	if _, err := New(p, m, "", o); err != nil {
		t.Errorf("with --allow-over-context: %v", err)
	}
	// A shared system prompt counts toward the first request.
	o = opts(100000)
	o.SharedSystemPromptLength = 40000
	if _, err := New(p, m, "", o); !cli.IsUsage(err) {
		t.Errorf("isl 100000 + system 40000: %v, want a usage error", err)
	}
	for _, o := range []Options{
		{ISL: 1_000_000_000_000, OSL: 16, Conversations: 1, Turns: 1, ISLSet: true, AllowOverContext: true},
		{ISL: 10, OSL: 1_000_000_000_000, Conversations: 1, Turns: 1, ISLSet: true, AllowOverContext: true},
		{ISL: 10, OSL: 16, Conversations: 1, Turns: 1, ISLSet: true, SharedSystemPromptLength: 1 << 40},
	} {
		if err := o.Validate(); !cli.IsUsage(err) || !strings.Contains(err.Error(), "at most") {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

// TestLaterTurnsOutgrowingContextWarned: turns whose request (with the
// history) outgrows the context are counted in a warning with numbers.
func TestLaterTurnsOutgrowingContextWarned(t *testing.T) {
	p, m := fakeProbe(t, cachebust.None, 0, 0, 0)
	p.MarkerTokens = 0
	o := opts(50000) // targets 50000, 100016, 150032
	c, err := New(p, m, "", o)
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, c)
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "1 of 3 turn(s)") || !strings.Contains(w, "131072") || !strings.Contains(w, "150032") {
		t.Errorf("warnings %q, want 1 of 3 turns over 131072 (largest 150032)", w)
	}
}

// TestUnreachableTurnsWarned: turns marked unreachable are counted on
// stderr with the reason, not only inside the records (issue 11, item 14).
func TestUnreachableTurnsWarned(t *testing.T) {
	p, m := fakeProbe(t, cachebust.FirstTurnPrefix, 4, 5, 10)
	c, err := New(p, m, "", opts(5))
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings before Run: %q", w)
	}
	runAll(t, c)
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "3 of 3 turn(s)") || !strings.Contains(w, "unreachable") || !strings.Contains(w, "template and marker") {
		t.Errorf("warnings %q, want 3 of 3 turns unreachable with the reason", w)
	}
}

// TestCorpusBOMAndTinyCorpus: a corpus file's BOM is no part of the text,
// and a corpus too short for one prompt is said to repeat (issue 11, item
// 14).
func TestCorpusBOMAndTinyCorpus(t *testing.T) {
	if got := corpus.Pieces("\ufeffCall me Ishmael.\n"); len(got) != 1 || got[0] != "Call me Ishmael." {
		t.Errorf("pieces %q", got)
	}
	p, m := fakeProbe(t, cachebust.None, 0, 0, 0)
	p.MarkerTokens = 0
	c, err := New(p, m, "whale", opts(100))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "corpus") || !strings.Contains(w, "repeat") {
		t.Errorf("warnings %q, want one saying the corpus repeats", w)
	}
	var sink strings.Builder
	if err := c.Run(context.Background(), jsonl.NewWriter(&sink)); err != nil {
		t.Fatal(err)
	}
	// The embedded corpus is long enough: no warning.
	c, _ = New(p, m, "", opts(100))
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("embedded corpus: warnings %q", w)
	}
}
