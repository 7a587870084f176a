package compose

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/testutil"
)

// TestLiveAddsOnlyItsFields: --live leaves every text, count and target
// as they were (the output without it is unchanged), the model the
// conversation was composed for included (every run writes it: the probe's
// tokenizer and template hashes and clock), and adds per turn a reserve that is the
// corpus text after the turn's text, of about the previous turn's
// max_tokens + LiveReserveMargin tokens.
func TestLiveAddsOnlyItsFields(t *testing.T) {
	p, m := realProbe(t, "", cachebust.FirstTurnSuffix)
	o := Options{ISL: 60, OSL: 20, OSLStddev: 5, Conversations: 3, Turns: 3, Seed: 4, BenchmarkID: testutil.SeedBenchmarkID(4), Exact: true, Workers: 1,
		SharedSystemPromptLength: 30, ISLSet: true, OSLSet: true, TurnsSet: true}
	plain, err := New(p, m, "", o)
	if err != nil {
		t.Fatal(err)
	}
	o.Live = true
	live, err := New(p, m, "", o)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := corpus.Default()
	joined := strings.Join(corpus.Pieces(text), "")
	for i := range o.Conversations {
		a, err := plain.Conversation(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := live.Conversation(i)
		if err != nil {
			t.Fatal(err)
		}
		f := b.ComposedFor
		if f == nil || a.ComposedFor == nil || *a.ComposedFor != *f || f.TokenizerSHA256 != p.Tokenizer.SHA256 || !f.ChatTemplateApplied ||
			f.ChatTemplateSHA256 != p.ChatTemplate.SHA256 || f.Now != "2025-07-10T12:00:00Z" {
			t.Fatalf("composed_for %+v (without --live %+v), probe %+v", f, a.ComposedFor, p.ChatTemplate)
		}
		for k := range b.Turns {
			ta, tb := a.Turns[k], b.Turns[k]
			if ta.Reserve != "" {
				t.Errorf("conv %d turn %d: reserve without --live", i, k)
			}
			res := tb.Reserve
			tb.Reserve = ""
			if ta.Text != tb.Text || ta.Assistant != tb.Assistant || *ta.WireISL != *tb.WireISL || ta.TargetISL != tb.TargetISL {
				t.Errorf("conv %d turn %d: --live changed the turn", i, k)
			}
			want := LiveReserveMargin
			if k > 0 {
				want += b.Turns[k-1].MaxTokens
			}
			if n := m.Tokenizer.Count(tb.Text+res) - tb.BareTokens; n < want-2 || n > want+2 {
				t.Errorf("conv %d turn %d: reserve adds %d tokens, want about %d", i, k, n, want)
			}
			// Padded texts end in a pad the corpus lacks; the reserve
			// still continues the corpus.
			if !strings.Contains(joined, strings.TrimLeft(res, " ")) {
				t.Errorf("conv %d turn %d: reserve %q is not corpus text", i, k, res)
			}
		}
	}
	o.Exact = false
	if _, err := New(p, m, "", o); !cli.IsUsage(err) {
		t.Errorf("--live --exact=false: %v, want a usage error", err)
	}
}
