package exact

import (
	"testing"

	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestResizeWhitespaceWindow: growing a turn whose reserve opens with a
// whitespace-only token ("  Some": "  " then " Some" for Qwen3's
// pre-tokenizer) by one token is exactly the text followed by that
// whitespace. resize returned the text without it, one token short,
// and said exact, so the record was silently off by one.
func TestResizeWhitespaceWindow(t *testing.T) {
	m, err := model.FromSource(testmodel.Source(t, ""), "", "")
	if err != nil {
		t.Fatal(err)
	}
	tok := m.Tokenizer
	text := "Call me Ishmael."
	orig := records.Turn{Text: text, BareTokens: tok.Count(text), Reserve: "   Some years ago, never mind how long precisely"}
	if n := tok.Count(text + "  "); n != orig.BareTokens+1 {
		t.Fatalf("the text and two spaces count %d, want %d: the premise is gone", n, orig.BareTokens+1)
	}
	target := orig.BareTokens + 1
	eval := func(s string) (sizing.Attempt, error) { return sizing.Attempt{Text: s, Wire: tok.Count(s)}, nil }
	got, out, err := resize(tok, &orig, target, target, eval)
	if err != nil {
		t.Fatal(err)
	}
	if n := tok.Count(got); out == sizing.Exact && n != target {
		t.Errorf("resize says exact with %q, which counts %d, not %d", got, n, target)
	}
}
