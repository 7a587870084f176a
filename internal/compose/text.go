package compose

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/tokenizer"
)

// textGen cuts texts of an exact bare token count out of a tokenized
// corpus.
type textGen struct {
	tok *tokenizer.Tokenizer
	ids []int
	// starts marks the corpus's ids whose token begins a word: 'G' for a
	// byte-level "Ġ…", 'M' for a SentencePiece "▁…". Read-only once built.
	starts map[int]byte
}

func newTextGen(tok *tokenizer.Tokenizer, ids []int) *textGen {
	g := &textGen{tok: tok, ids: ids, starts: map[int]byte{}}
	for _, id := range ids {
		if _, done := g.starts[id]; done {
			continue
		}
		s, _ := tok.IDToToken(id)
		switch {
		case strings.HasPrefix(s, "Ġ"):
			g.starts[id] = 'G'
		case strings.HasPrefix(s, "▁"):
			g.starts[id] = 'M'
		default:
			g.starts[id] = 0
		}
	}
	return g
}

// decodePiece is the piece size decode aims for.
const decodePiece = 64

// decode is tok.Decode(ids), computed piecewise because Decode's cost
// grows with the square of the text: pieces are cut before a token that
// starts a word, where a byte-level decode cannot split a character, and
// the leading space a SentencePiece decoder strips from each piece is put
// back. TestDecodeMatches checks it against Decode on every model; the
// callers verify counts anyway.
func (g *textGen) decode(ids []int) string {
	if len(ids) <= 2*decodePiece {
		return g.tok.Decode(ids, false)
	}
	var sb strings.Builder
	for from := 0; from < len(ids); {
		to := min(len(ids), from+decodePiece)
		for to < len(ids) && g.starts[ids[to]] == 0 {
			to++
		}
		s := g.tok.Decode(ids[from:to], false)
		if from > 0 && g.starts[ids[from]] == 'M' && !strings.HasPrefix(s, " ") {
			sb.WriteByte(' ')
		}
		sb.WriteString(s)
		from = to
	}
	return sb.String()
}

// pads are appended one at a time when a text is a few tokens short; each
// is a common word that is a single token in every vocabulary we know, so
// it moves the count by one.
var pads = []string{" the", " and", " of", " a", ".", " to", " in", " it"}

// window returns ids[start : start+n], wrapping around the corpus.
func (g *textGen) window(start, n int) []int {
	out := make([]int, 0, n)
	start %= len(g.ids)
	for len(out) < n {
		take := min(n-len(out), len(g.ids)-start)
		out = append(out, g.ids[start:start+take]...)
		start = 0
	}
	return out
}

// exact returns text whose bare count is exactly n (n >= 1): AIPerf's
// repair loop (decode a window, re-encode, grow or shrink the window by
// the error, up to 10 times), then, because BPE merges at the cut can make
// that oscillate, a word-level fix that always ends or says it cannot.
func (g *textGen) exact(start, n int) (string, error) {
	length := n
	var text string
	for range 10 {
		text = g.decode(g.window(start, length))
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
