package compose

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
)

func genFor(t *testing.T, dir string) *textGen {
	t.Helper()
	src, err := modelsrc.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := corpus.Default()
	ids, err := tokenizedCorpus(text, &Model{Tokenizer: tok}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return newTextGen(tok, ids)
}

// The piecewise decode must equal the tokenizer's own Decode, and exact
// must hit every length, on every reference model.
func TestDecodeMatchesAndExactConverges(t *testing.T) {
	shared := testutil.SharedDir(t)
	entries, err := os.ReadDir(filepath.Join(shared, "models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			g := genFor(t, filepath.Join(shared, "models", e.Name()))
			rng := rand.New(rand.NewPCG(7, 7))
			for i := range 40 {
				n := 1 + rng.IntN(1500)
				if i < 10 {
					n = 1 + i // the smallest lengths are the hardest
				}
				start := rng.IntN(len(g.ids) - 2000)
				aligned := g.pieceStart[sort.SearchInts(g.pieceStart, start+1)-1]
				if got, want := g.text(start, n), g.tok.Decode(g.window(aligned, n), false); got != want {
					t.Fatalf("text of %d ids at %d differs from Decode:\n%q\n%q", n, aligned, got, want)
				}
				text, err := g.exact(start, n)
				if err != nil {
					t.Fatalf("exact(%d): %v", n, err)
				}
				if c := g.tok.Count(text); c != n {
					t.Fatalf("exact(%d) counts %d", n, c)
				}
			}
		})
	}
}

func TestDropLastWord(t *testing.T) {
	for in, want := range map[string]string{"a b c": "a b", "a b ": "a", "abc": "ab", "é": "", "": ""} {
		if got := dropLastWord(in); got != want {
			t.Errorf("dropLastWord(%q) = %q, want %q", in, got, want)
		}
	}
}
