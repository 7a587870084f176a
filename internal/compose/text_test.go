package compose

import (
	"math/rand/v2"
	"testing"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

func genFor(t *testing.T, model string) *sizing.Gen {
	t.Helper()
	tok, err := testmodel.Source(t, model).Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := corpus.Default()
	g, err := corpusGen(text, &Model{Tokenizer: tok}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// On every reference model a corpus window's text counts close to its
// token length (pieces are encoded on their own, so seams may differ by a
// token), and exact hits every length, the smallest ones included.
func TestTextAndExactConverges(t *testing.T) {
	models := testutil.RefModels(t)
	if testing.Short() {
		// Parsing the five larger tokenizers dominates under -race (the
		// -short pass of make test); the full pass covers every model.
		models = []string{"mistral7b", "qwen3"}
	}
	for _, model := range models {
		t.Run(model, func(t *testing.T) {
			g := genFor(t, model)
			rng := rand.New(rand.NewPCG(7, 7))
			for i := range 40 {
				n := 1 + rng.IntN(1500)
				if i < 10 {
					n = 1 + i // the smallest lengths are the hardest
				}
				start := rng.IntN(len(g.IDs()))
				if c := g.Tokenizer().Count(g.Text(start, n)); c < n-n/16-3 || c > n+n/16+3 {
					t.Errorf("text of %d tokens at %d counts %d", n, start, c)
				}
				text, err := g.Exact(start, n)
				if err != nil {
					t.Fatalf("exact(%d): %v", n, err)
				}
				if c := g.Tokenizer().Count(text); c != n {
					t.Fatalf("exact(%d) counts %d", n, c)
				}
			}
		})
	}
}

// TestCorpusCacheIsBounded: the cache hands back what it holds, most
// recently used first to stay, and never holds more than its bound.
func TestCorpusCacheIsBounded(t *testing.T) {
	c := corpusCache{max: 2}
	key := func(b byte) corpusKey { return corpusKey{text: [32]byte{b}} }
	gens := []*sizing.Gen{{}, {}, {}}
	c.put(key(0), gens[0])
	c.put(key(1), gens[1])
	if c.get(key(0)) != gens[0] { // 0 is now the most recent
		t.Fatal("entry 0 not found")
	}
	c.put(key(2), gens[2]) // evicts 1, the least recently used
	if c.get(key(1)) != nil {
		t.Error("entry 1 still held past the bound")
	}
	if c.get(key(0)) != gens[0] || c.get(key(2)) != gens[2] {
		t.Error("entries 0 and 2 should be held")
	}
	if len(c.entries) != 2 {
		t.Errorf("%d entries, want 2", len(c.entries))
	}
}
