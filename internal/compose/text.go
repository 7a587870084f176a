package compose

import (
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/tokenizer"
)

// textGen is compose's handle on the shared sizing logic
// (internal/sizing, which send --exact resizes live turns with): the
// corpus's tokens and the searches, under the names compose's files use.
type textGen struct {
	*sizing.Gen
	tok *tokenizer.Tokenizer
	ids []int
}

func newTextGen(tok *tokenizer.Tokenizer, text string, workers int) (*textGen, error) {
	g, err := sizing.New(tok, text, workers)
	if err != nil {
		return nil, err
	}
	return &textGen{Gen: g, tok: tok, ids: g.IDs()}, nil
}

func (g *textGen) text(start, n int) string { return g.Text(start, n) }

func (g *textGen) exact(start, n int) (string, error) { return g.Exact(start, n) }

// attempt is a candidate text and the count it gives; start and n are
// the corpus window it was cut from (sizing.Attempt).
type attempt struct {
	text     string
	wire     int
	start, n int
}

// outcome of search (sizing.Outcome).
type outcome = sizing.Outcome

const (
	exact       = sizing.Exact
	unreachable = sizing.Unreachable
	stuck       = sizing.Stuck
)

// search is sizing.Gen.Search with compose's attempt.
func (g *textGen) search(start, guess, target int, eval func(text string) (attempt, error)) (attempt, outcome, error) {
	a, out, err := g.Search(start, guess, target, func(text string) (sizing.Attempt, error) {
		a, err := eval(text)
		return sizing.Attempt{Text: a.text, Wire: a.wire}, err
	})
	return attempt{text: a.Text, wire: a.Wire, start: a.Start, n: a.Len}, out, err
}
