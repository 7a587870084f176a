// Package sizing cuts texts of an exact token count out of a tokenized
// text and searches for the text that makes a rendered request count
// exactly a target. It is the one sizing logic: compose cuts its turns from
// the corpus with it, and send --exact resizes a live turn with it, taking
// more or less of the turn's own text and of the continuation compose
// recorded after it.
package sizing

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/tokenizer"
)

// Gen cuts texts out of one tokenized text. It is read-only once built,
// and safe for concurrent use.
type Gen struct {
	tok *tokenizer.Tokenizer
	// ids is the text's tokens: piece k is pieceText[k], whose own
	// encoding is ids[pieceStart[k]:pieceStart[k+1]] (corpus.Pieces).
	ids        []int
	pieceStart []int
	pieceText  []string
	// seams is each piece's tokenizer.TextSeams, found on first use.
	seams []atomic.Pointer[[][2]int32]
}

// New tokenizes a corpus (corpus.Pieces: lines trimmed and joined by one
// space) with up to workers goroutines.
func New(tok *tokenizer.Tokenizer, text string, workers int) (*Gen, error) {
	pieces := corpus.Pieces(text)
	if len(pieces) == 0 {
		return nil, fmt.Errorf("corpus has no text")
	}
	return fromPieces(tok, pieces, workers)
}

// Verbatim tokenizes text as it is (newlines and all), for cutting a
// prefix of a given text: Text(0, n) is about its first n tokens.
func Verbatim(tok *tokenizer.Tokenizer, text string) (*Gen, error) {
	var pieces []string
	for pos := 0; pos < len(text); {
		// Cut just before a space, where the pre-tokenizers cut anyway.
		end := pos + corpus.PieceBytes
		if end >= len(text) {
			end = len(text)
		} else if i := strings.IndexByte(text[end:], ' '); i < 0 {
			end = len(text)
		} else {
			end += i
		}
		pieces = append(pieces, text[pos:end])
		pos = end
	}
	if len(pieces) == 0 {
		return nil, fmt.Errorf("no text")
	}
	return fromPieces(tok, pieces, 1)
}

func fromPieces(tok *tokenizer.Tokenizer, pieces []string, workers int) (*Gen, error) {
	enc := corpus.TokenizePieces(pieces, tok, workers)
	g := &Gen{tok: tok}
	for k, ids := range enc {
		if len(ids) == 0 {
			continue
		}
		g.pieceStart = append(g.pieceStart, len(g.ids))
		g.pieceText = append(g.pieceText, pieces[k])
		g.ids = append(g.ids, ids...)
	}
	if len(g.ids) == 0 {
		return nil, fmt.Errorf("text encodes to no tokens")
	}
	g.seams = make([]atomic.Pointer[[][2]int32], len(g.pieceStart))
	return g, nil
}

// IDs is the text's tokens (shared: do not modify).
func (g *Gen) IDs() []int { return g.ids }

// Tokenizer is the tokenizer g counts with.
func (g *Gen) Tokenizer() *tokenizer.Tokenizer { return g.tok }

func (g *Gen) pieceLen(p int) int {
	if p+1 < len(g.pieceStart) {
		return g.pieceStart[p+1] - g.pieceStart[p]
	}
	return len(g.ids) - g.pieceStart[p]
}

// Text is about n tokens of text from token position start, wrapping
// around: whole pieces verbatim, and the first and last partial pieces
// decoded. Any position can start a prompt (starting only at piece
// boundaries would make identical prompt prefixes, and server cache hits,
// likely across a thousand conversations). The leading space is dropped.
// Callers count the result: merges at the seams can move it by a token.
func (g *Gen) Text(start, n int) string {
	var sb strings.Builder
	sb.Grow(5 * n) // over a token's bytes in the corpora we ship: one allocation
	g.eachPart(start, n, func(p Part) { sb.WriteString(p.Text) })
	return sb.String()
}

// Part is a stretch of a window's text: a piece of the text verbatim,
// with IDs its own encoding (shared: do not modify) and Count their
// number, or a decoded part of one, with Count -1 and no IDs.
type Part struct {
	Text  string
	Count int
	IDs   []int
}

// Parts is Text(start, n) in the parts it is made of, appended to dst:
// their texts joined are Text(start, n).
func (g *Gen) Parts(dst []Part, start, n int) []Part {
	g.eachPart(start, n, func(p Part) { dst = append(dst, p) })
	return dst
}

// eachPart calls fn with each part of Text(start, n). A partial piece
// keeps its stretch between the piece's seams verbatim (stretch), so only
// its ends are decoded parts.
func (g *Gen) eachPart(start, n int, fn func(Part)) {
	start %= len(g.ids)
	p := sort.SearchInts(g.pieceStart, start+1) - 1
	first := true
	emit := func(s string, count int, ids []int) {
		if first {
			first = false
			if t := strings.TrimLeft(s, " "); t != s {
				s, count, ids = t, -1, nil
			}
		}
		fn(Part{Text: s, Count: count, IDs: ids})
	}
	for n > 0 {
		ps := g.pieceStart[p]
		from := max(start, ps)
		l := min(n, ps+g.pieceLen(p)-from)
		switch a, b, offA, offB, ok := g.stretch(p, from-ps, from-ps+l); {
		case from == ps && l == g.pieceLen(p):
			emit(g.pieceText[p], l, g.ids[from:from+l:from+l])
		case ok:
			if a > from-ps {
				emit(g.tok.Decode(g.ids[from:ps+a], false), -1, nil)
			}
			emit(g.pieceText[p][offA:offB], b-a, g.ids[ps+a:ps+b:ps+b])
			if end := from + l; ps+b < end {
				emit(g.tok.Decode(g.ids[ps+b:end], false), -1, nil)
			}
		default:
			s := g.tok.Decode(g.ids[from:from+l], false)
			// SentencePiece decoders drop the leading space a piece has.
			if from == ps && strings.HasPrefix(g.pieceText[p], " ") && !strings.HasPrefix(s, " ") {
				s = " " + s
			}
			emit(s, -1, nil)
		}
		n -= l
		start = 0
		p = (p + 1) % len(g.pieceStart)
	}
}

// stretch is the longest stretch [a, b) of piece p's ids within [from,
// end) (indexes into the piece) whose ends are the piece's ends or its
// seams (tokenizer.TextSeams): the encoding of the piece's text
// [offA, offB) is those ids. ok is false where there is none. Decoding
// the ids before a and after b apart gives the text decoding [from, end)
// gives, the cuts being before a space (an ASCII byte, which no invalid
// UTF-8 sequence spans).
func (g *Gen) stretch(p, from, end int) (a, b, offA, offB int, ok bool) {
	seams := g.pieceSeams(p)
	if len(seams) == 0 {
		return 0, 0, 0, 0, false
	}
	a, b, offB = -1, -1, len(g.pieceText[p])
	if from == 0 {
		a = 0
	} else if i := sort.Search(len(seams), func(i int) bool { return int(seams[i][0]) > from }); i < len(seams) {
		a, offA = int(seams[i][0]), int(seams[i][1])
	}
	if end == g.pieceLen(p) {
		b = end
	} else if i := sort.Search(len(seams), func(i int) bool { return int(seams[i][0]) >= end }) - 1; i >= 0 {
		b, offB = int(seams[i][0]), int(seams[i][1])
	}
	if a < 0 || b < 0 || a >= b {
		return 0, 0, 0, 0, false
	}
	return a, b, offA, offB, true
}

// pieceSeams is tokenizer.TextSeams of piece p, found on first use.
func (g *Gen) pieceSeams(p int) [][2]int32 {
	if p >= len(g.seams) {
		return nil // a Gen built without New
	}
	if s := g.seams[p].Load(); s != nil {
		return *s
	}
	ps := g.pieceStart[p]
	s := g.tok.TextSeams(g.pieceText[p], g.ids[ps:ps+g.pieceLen(p)])
	g.seams[p].Store(&s)
	return s
}

func joinParts(parts []Part) string {
	n := 0
	for _, p := range parts {
		n += len(p.Text)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// Continuation is the r tokens of text that follow the window
// Text(start, n): appended to that window's text it reads on as the
// corpus does (leading space kept). A window that ends inside a UTF-8
// character of a byte-level vocabulary has no clean seam; the decoded
// continuation then follows after one space.
func (g *Gen) Continuation(start, n, r int) string {
	if r < 1 {
		return ""
	}
	window, longer := g.Text(start, n), g.Text(start, n+r)
	if rest, ok := strings.CutPrefix(longer, window); ok && utf8.ValidString(rest) {
		return rest
	}
	return " " + strings.TrimLeft(g.Text(start+n, r), " ")
}

// Pads are appended one at a time when a text is a few tokens short; each
// is a common word that is a single token in every vocabulary we know, so
// it moves the count by one.
var Pads = []string{" the", " and", " of", " a", ".", " to", " in", " it"}

// Exact returns text whose bare count is exactly n (n >= 1): AIPerf's
// repair loop (decode a window, re-encode, grow or shrink the window by
// the error, up to 10 times), then, because BPE merges at the cut can make
// that oscillate, a word-level fix that always ends or says it cannot.
func (g *Gen) Exact(start, n int) (string, error) {
	length := n
	var text string
	for range 10 {
		text = g.Text(start, length)
		c := g.tok.Count(text)
		if c == n {
			return text, nil
		}
		length = max(1, length+n-c)
	}
	return g.Fix(text, n)
}

// Fix trims words while text is too long and appends pads while it is too
// short. Counting whole texts keeps it exact whatever the tokenizer does at
// the edit point; the step bound makes it end.
func (g *Gen) Fix(text string, n int) (string, error) {
	c := g.tok.Count(text)
	for step := 0; step < 256; step++ {
		switch {
		case c == n:
			return text, nil
		case c > n:
			text = DropLastWord(text)
			c = g.tok.Count(text)
		default:
			grown := false
			for _, p := range Pads {
				if c2 := g.tok.Count(text + p); c2 > c && c2 <= n {
					text, c, grown = text+p, c2, true
					break
				}
			}
			if !grown { // every pad overshoots: back off a word and retry
				text = DropLastWord(text)
				c = g.tok.Count(text)
			}
		}
	}
	return "", fmt.Errorf("cannot make a text of exactly %d tokens with this tokenizer (closest %d)", n, c)
}

// DropLastWord removes the last space-separated word (or, for a text
// without spaces, its last character).
func DropLastWord(s string) string {
	s = strings.TrimRight(s, " ")
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	_, size := utf8.DecodeLastRuneInString(s)
	return s[:len(s)-size]
}

// Attempt is a candidate text and the count it gives. Search fills Start
// and Len: the window Text(Start, Len) the text was cut from (pads may
// follow it), so a caller can continue the text where the window ends.
type Attempt struct {
	Text       string
	Wire       int
	Start, Len int
}

// Outcome of Search.
type Outcome int

// The outcomes.
const (
	Exact       Outcome = iota
	Unreachable         // even a one-token text overshoots; the attempt is that text
	Stuck               // no text found; the attempt is the closest below
)

// Search finds a text whose eval count is exactly target: Newton-like
// steps on the bare budget (the count is nearly linear in it), then ±1
// steps where the count jumps, then single-token pads on the closest text
// below the target, then other windows of the text. Every path is bounded.
func (g *Gen) Search(start, guess, target int, eval func(text string) (Attempt, error)) (Attempt, Outcome, error) {
	return g.SearchWindows(start, guess, target, eval, nil)
}

// WindowEval evaluates a window's text from its parts (Parts): it must
// give what eval gives for the text, and may count the parts instead of
// the text.
type WindowEval func(parts []Part, text string) (Attempt, error)

// SearchWindows is Search with the windows it cuts evaluated by window
// (when not nil) from their parts; pads and other edits go to eval.
func (g *Gen) SearchWindows(start, guess, target int, eval func(text string) (Attempt, error), window WindowEval) (Attempt, Outcome, error) {
	var below, padded *Attempt // padded: the below last padded (padding it again changes nothing)
	for try := 0; try < 4; try++ {
		s := start + try*(len(g.ids)/5+1)
		if a, out, done, err := g.walk(s, guess, target, eval, window, &below); done {
			return a, out, err
		}
		if below != nil && below != padded {
			a, err := g.pad(g.padEval(eval, window, *below), *below, target)
			if err != nil {
				return Attempt{}, Stuck, err
			}
			if a.Wire == target {
				return a, Exact, nil
			}
			below, padded = &a, &a
		}
	}
	if below == nil {
		return Attempt{}, Stuck, nil
	}
	a, err := g.PadBackOff(eval, *below, target)
	if err != nil {
		return Attempt{}, Stuck, err
	}
	if a.Wire == target {
		return a, Exact, nil
	}
	return a, Stuck, nil
}

// SearchPrefix is Search restricted to texts that open where g does
// (Text(0, b)), for a text that must keep its beginning: the steps over
// the one window, then pads on the closest text below the target. Stuck
// means another g (another continuation) may do.
func (g *Gen) SearchPrefix(guess, target int, eval func(text string) (Attempt, error)) (Attempt, Outcome, error) {
	var below *Attempt
	if a, out, done, err := g.walk(0, guess, target, eval, nil, &below); done {
		return a, out, err
	}
	if below == nil {
		return Attempt{}, Stuck, nil
	}
	a, err := g.pad(eval, *below, target)
	if err == nil && a.Wire != target {
		a, err = g.PadBackOff(eval, a, target)
	}
	if err != nil || a.Wire != target {
		return a, Stuck, err
	}
	return a, Exact, nil
}

// walk takes the budget steps over the windows Text(s, b): Newton-like
// steps (the count is nearly linear in b), then ±1 steps where the count
// jumps. done is set with an exact or unreachable attempt (or an error);
// otherwise *below is left at the closest attempt under the target.
func (g *Gen) walk(s, guess, target int, eval func(text string) (Attempt, error), window WindowEval, below **Attempt) (Attempt, Outcome, bool, error) {
	tried := map[int]bool{}
	b := max(1, guess)
	var parts []Part
	for range 24 {
		// The window's own bare count may differ from b by a merge at its
		// ends; only the wire count matters here, and the bare count is
		// taken once for the text that is kept.
		var a Attempt
		var err error
		if window != nil {
			parts = g.Parts(parts[:0], s, b)
			a, err = window(parts, joinParts(parts))
		} else {
			a, err = eval(g.Text(s, b))
		}
		if err != nil {
			return Attempt{}, Stuck, true, err
		}
		a.Start, a.Len = s, b
		tried[b] = true
		switch {
		case a.Wire == target:
			return a, Exact, true, nil
		case a.Wire > target && b == 1:
			return a, Unreachable, true, nil
		case a.Wire < target && (*below == nil || a.Wire > (*below).Wire):
			*below = &a
		}
		nb := max(1, b-(a.Wire-target))
		if tried[nb] {
			if a.Wire > target {
				nb = b - 1
			} else {
				nb = b + 1
			}
			if tried[nb] || nb < 1 {
				break // the count jumps over the target between two budgets
			}
		}
		b = nb
	}
	return Attempt{}, Stuck, false, nil
}

// Continued is a Gen over own (whose tokens are ownIDs) followed by at
// least need tokens of g's pieces, from the piece holding token start:
// its Text(0, b) is a prefix of own while b is below own's count, else
// own continued with g's text.
func (g *Gen) Continued(own string, ownIDs []int, start, need int) *Gen {
	c := &Gen{tok: g.tok}
	if len(ownIDs) > 0 {
		c.pieceStart = append(c.pieceStart, 0)
		c.pieceText = append(c.pieceText, own)
		c.ids = append(c.ids, ownIDs...)
	}
	p := sort.SearchInts(g.pieceStart, start%len(g.ids)+1) - 1
	for got := 0; got < need || len(c.ids) == 0; p = (p + 1) % len(g.pieceStart) {
		if p == 0 && len(c.ids) > 0 && len(g.pieceStart) > 1 {
			continue // the corpus's first piece opens without the space that joins it
		}
		c.pieceStart = append(c.pieceStart, len(c.ids))
		c.pieceText = append(c.pieceText, g.pieceText[p])
		c.ids = append(c.ids, g.ids[g.pieceStart[p]:g.pieceStart[p]+g.pieceLen(p)]...)
		got += g.pieceLen(p)
	}
	c.seams = make([]atomic.Pointer[[][2]int32], len(c.pieceStart))
	return c
}

// pad appends single-token words to a text whose count is short of the
// target, keeping only appends that do not overshoot.
func (g *Gen) pad(eval func(string) (Attempt, error), a Attempt, target int) (Attempt, error) {
	for step := 0; step < 64 && a.Wire < target; step++ {
		grown := false
		for _, p := range Pads {
			b, err := eval(a.Text + p)
			if err != nil {
				return a, err
			}
			if b.Wire > a.Wire && b.Wire <= target {
				b.Start, b.Len = a.Start, a.Len
				a, grown = b, true
				break
			}
		}
		if !grown {
			break
		}
	}
	return a, nil
}

// padEval is eval for a's text with pads appended, by window from the
// parts of a's window and the pads as one more part where a's text is its
// window's text (trimmed), else eval: a padded window is then counted
// from its parts too.
func (g *Gen) padEval(eval func(string) (Attempt, error), window WindowEval, a Attempt) func(string) (Attempt, error) {
	if window == nil || a.Len < 1 {
		return eval
	}
	base := g.Parts(nil, a.Start, a.Len)
	last := &base[len(base)-1]
	if tr := strings.TrimRight(last.Text, " "); tr != last.Text {
		*last = Part{Text: tr, Count: -1}
	}
	if last.Text == "" || joinParts(base) != a.Text {
		return eval
	}
	var parts []Part
	return func(text string) (Attempt, error) {
		pads, ok := strings.CutPrefix(text, a.Text)
		if !ok || pads == "" {
			return eval(text)
		}
		parts = append(append(parts[:0], base...), Part{Text: pads, Count: -1})
		return window(parts, text)
	}
}

// PadBackOff is the last resort of Search, when every window got stuck
// below the target: every pad then adds two tokens or none, because the
// text's end merges with what follows it (",\n\n" before a suffix marker
// is one token). It drops the last word, which ends the text elsewhere,
// and pads again, a bounded number of times.
func (g *Gen) PadBackOff(eval func(string) (Attempt, error), a Attempt, target int) (Attempt, error) {
	for step := 0; step < 16 && a.Wire < target; step++ {
		shorter := DropLastWord(a.Text)
		if shorter == "" || shorter == a.Text {
			break
		}
		b, err := eval(shorter)
		if err != nil || b.Wire >= a.Wire {
			return a, err
		}
		b.Start, b.Len = a.Start, a.Len
		if a, err = g.pad(eval, b, target); err != nil {
			return a, err
		}
	}
	return a, nil
}
