package sizing

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/tokenizer"
)

func TestDropLastWord(t *testing.T) {
	for in, want := range map[string]string{"a b c": "a b", "a b ": "a", "abc": "ab", "é": "", "": ""} {
		if got := DropLastWord(in); got != want {
			t.Errorf("DropLastWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func tokenizerOf(t *testing.T, model string) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := testmodel.Source(t, model).Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestPadBacksOff: a text ending in "," before a suffix marker ends in the
// one token ",\n\n"; a pad then adds two tokens (",", " the", "\n\n") or none
// (",.\n\n" is one token too), so
// a target one above is reached only by dropping a word and padding again
// (trace row 499 of BenchmarkComposeTrace was refused before); search does
// that when every window got stuck.
func TestPadBacksOff(t *testing.T) {
	tok := tokenizerOf(t, "")
	eval := func(s string) (Attempt, error) {
		return Attempt{Text: s, Wire: tok.Count(s + "\n\n[rid:c3a795a24b86]")}, nil
	}
	base, _ := eval("then the jaw is lashed down to ringbolts, and a tackle being rigged from aloft,")
	for _, p := range Pads {
		if b, _ := eval(base.Text + p); b.Wire == base.Wire+1 {
			t.Fatalf("pad %q adds one token; the case needs every pad to add none or two", p)
		}
	}
	g := &Gen{tok: tok}
	got, err := g.PadBackOff(eval, base, base.Wire+1)
	if err != nil || got.Wire != base.Wire+1 {
		t.Errorf("pad reached %d (%q), want %d", got.Wire, got.Text, base.Wire+1)
	}
}

// TestContinuationReadsOn: the continuation of a window, appended to the
// window's text, is the corpus text that follows it, byte for byte, on a
// byte-level (Qwen3) and a SentencePiece (Mistral, Metaspace) vocabulary:
// send --exact grows a turn from there.
func TestContinuationReadsOn(t *testing.T) {
	text, _ := corpus.Default()
	joined := strings.Join(corpus.Pieces(text), "")
	for _, model := range []string{"", "mistral7b-metaspace"} {
		g, err := New(tokenizerOf(t, model), text, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range [][2]int{{0, 10}, {1000, 37}, {5000, 300}, {123456, 1}} {
			window := g.Text(w[0], w[1])
			got := window + g.Continuation(w[0], w[1], 50)
			if !strings.Contains(joined, got) {
				t.Errorf("%s: window %v and its continuation %q are not corpus text", model, w, got)
			}
			if c := g.tok.Count(got) - g.tok.Count(window); c < 45 || c > 55 {
				t.Errorf("%s: window %v: continuation of 50 tokens adds %d", model, w, c)
			}
		}
	}
}

// TestVerbatimKeepsText: a verbatim text's tokens, newlines kept, cut back
// to its whole length give the text itself.
func TestVerbatimKeepsText(t *testing.T) {
	tok := tokenizerOf(t, "")
	text := strings.Repeat("Call me Ishmael.\n\nSome years ago, never mind how long precisely ", 20)
	g, err := Verbatim(tok, text)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Text(0, len(g.IDs())); got != text {
		t.Errorf("whole text differs:\n%q\n%q", got, text)
	}
}
