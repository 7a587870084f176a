package compose

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/tokenizer"
)

// textGen cuts texts of an exact bare token count out of a tokenized
// corpus. It is read-only once built, and shared by every composer of one
// model and corpus.
type textGen struct {
	tok *tokenizer.Tokenizer
	// ids is the corpus's tokens: piece k is pieceText[k], whose own
	// encoding is ids[pieceStart[k]:pieceStart[k+1]] (corpus.Pieces).
	ids        []int
	pieceStart []int
	pieceText  []string
}

func newTextGen(tok *tokenizer.Tokenizer, text string, workers int) (*textGen, error) {
	pieces := corpus.Pieces(text)
	if len(pieces) == 0 {
		return nil, fmt.Errorf("corpus has no text")
	}
	enc := corpus.TokenizePieces(pieces, tok, workers)
	g := &textGen{tok: tok}
	for k, ids := range enc {
		if len(ids) == 0 {
			continue
		}
		g.pieceStart = append(g.pieceStart, len(g.ids))
		g.pieceText = append(g.pieceText, pieces[k])
		g.ids = append(g.ids, ids...)
	}
	if len(g.ids) == 0 {
		return nil, fmt.Errorf("corpus encodes to no tokens")
	}
	return g, nil
}

func (g *textGen) pieceLen(p int) int {
	if p+1 < len(g.pieceStart) {
		return g.pieceStart[p+1] - g.pieceStart[p]
	}
	return len(g.ids) - g.pieceStart[p]
}

// text is about n tokens of corpus text from token position start,
// wrapping around: whole pieces verbatim, and the first and last partial
// pieces decoded. Any position can start a prompt (starting only at piece
// boundaries would make identical prompt prefixes, and server cache hits,
// likely across a thousand conversations). The leading space is dropped.
// Callers count the result: merges at the seams can move it by a token.
func (g *textGen) text(start, n int) string {
	start %= len(g.ids)
	p := sort.SearchInts(g.pieceStart, start+1) - 1
	var sb strings.Builder
	for first := true; n > 0; first = false {
		from := max(start, g.pieceStart[p])
		l := min(n, g.pieceStart[p]+g.pieceLen(p)-from)
		var s string
		if from == g.pieceStart[p] && l == g.pieceLen(p) {
			s = g.pieceText[p]
		} else {
			s = g.tok.Decode(g.ids[from:from+l], false)
			// SentencePiece decoders drop the leading space a piece has.
			if from == g.pieceStart[p] && strings.HasPrefix(g.pieceText[p], " ") && !strings.HasPrefix(s, " ") {
				s = " " + s
			}
		}
		if first {
			s = strings.TrimLeft(s, " ")
		}
		sb.WriteString(s)
		n -= l
		start = 0
		p = (p + 1) % len(g.pieceStart)
	}
	return sb.String()
}

// pads are appended one at a time when a text is a few tokens short; each
// is a common word that is a single token in every vocabulary we know, so
// it moves the count by one.
var pads = []string{" the", " and", " of", " a", ".", " to", " in", " it"}

// exact returns text whose bare count is exactly n (n >= 1): AIPerf's
// repair loop (decode a window, re-encode, grow or shrink the window by
// the error, up to 10 times), then, because BPE merges at the cut can make
// that oscillate, a word-level fix that always ends or says it cannot.
func (g *textGen) exact(start, n int) (string, error) {
	length := n
	var text string
	for range 10 {
		text = g.text(start, length)
		c := g.tok.Count(text)
		if c == n {
			return text, nil
		}
		length = max(1, length+n-c)
	}
	return g.fix(text, n)
}

// fix trims words while text is too long and appends pads while it is too
// short. Counting whole texts keeps it exact whatever the tokenizer does at
// the edit point; the step bound makes it end.
func (g *textGen) fix(text string, n int) (string, error) {
	c := g.tok.Count(text)
	for step := 0; step < 256; step++ {
		switch {
		case c == n:
			return text, nil
		case c > n:
			text = dropLastWord(text)
			c = g.tok.Count(text)
		default:
			grown := false
			for _, p := range pads {
				if c2 := g.tok.Count(text + p); c2 > c && c2 <= n {
					text, c, grown = text+p, c2, true
					break
				}
			}
			if !grown { // every pad overshoots: back off a word and retry
				text = dropLastWord(text)
				c = g.tok.Count(text)
			}
		}
	}
	return "", fmt.Errorf("cannot make a text of exactly %d tokens with this tokenizer (closest %d)", n, c)
}

// dropLastWord removes the last space-separated word (or, for a text
// without spaces, its last character).
func dropLastWord(s string) string {
	s = strings.TrimRight(s, " ")
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	_, size := utf8.DecodeLastRuneInString(s)
	return s[:len(s)-size]
}
