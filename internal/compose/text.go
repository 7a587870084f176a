package compose

import (
	"fmt"
	"sort"
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
	// The corpus is decoded once, in pieces of about decodePiece tokens cut
	// before a word-starting token; a window is then whole pieces plus one
	// short decode, instead of a decode of the whole window (Decode costs
	// about as much as an encode). spaced[k]: a SentencePiece decoder
	// strips the leading space of piece k, which a window that continues
	// into it must put back.
	pieceStart []int
	pieceText  []string
	spaced     []bool
}

// decodePiece is the piece size decode aims for.
const decodePiece = 64

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
	for from := 0; from < len(ids); {
		to := min(len(ids), from+decodePiece)
		for to < len(ids) && g.starts[ids[to]] == 0 {
			to++
		}
		text := tok.Decode(ids[from:to], false)
		g.pieceStart = append(g.pieceStart, from)
		g.pieceText = append(g.pieceText, text)
		g.spaced = append(g.spaced, g.starts[ids[from]] == 'M' && !strings.HasPrefix(text, " "))
		from = to
	}
	return g
}

func (g *textGen) pieceLen(p int) int {
	if p+1 < len(g.pieceStart) {
		return g.pieceStart[p+1] - g.pieceStart[p]
	}
	return len(g.ids) - g.pieceStart[p]
}

// text decodes n corpus tokens from the start of the piece holding
// position start (wrapping around the corpus): the same text as
// tok.Decode of those ids, except across the wrap.
func (g *textGen) text(start, n int) string {
	p := sort.SearchInts(g.pieceStart, start%len(g.ids)+1) - 1
	var sb strings.Builder
	for first := true; n > 0; first = false {
		l := g.pieceLen(p)
		if !first && g.spaced[p] {
			sb.WriteByte(' ')
		}
		if l <= n {
			sb.WriteString(g.pieceText[p])
		} else {
			sb.WriteString(g.tok.Decode(g.ids[g.pieceStart[p]:g.pieceStart[p]+n], false))
			l = n
		}
		n -= l
		p = (p + 1) % len(g.pieceStart)
	}
	return sb.String()
}

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
