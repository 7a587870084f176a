package tokenizer

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// seamMatcher returns the first pre-tokenizer step's matcher when Seam can
// reason about the pipeline, or nil. On top of what spanSteps requires
// (forward scanners, no normalized added tokens, no single_word ones):
// added tokens neither strip nor hold a space (so none is found across a
// space, and none reaches past one); the normalizer, if any, is NFC (it
// acts on the two sides of a space apart, the space and the printable
// ASCII before it being stable code points); and the first step cuts by
// matches (Split, or ByteLevel with its regex).
func (t *Tokenizer) seamMatcher() regex.Matcher {
	if t.spanPre == nil {
		return nil
	}
	for _, tok := range t.added {
		if tok.LStrip || tok.RStrip || tok.SingleWord || tok.Normalized || strings.ContainsRune(tok.Content, ' ') {
			return nil
		}
	}
	if !nfcOnly(t.normalizer) {
		return nil
	}
	switch s := t.spanPre[0].(type) {
	case *splitPreTokenizer:
		if re, ok := s.pattern.(regexPattern); ok {
			return re.m
		}
	case *byteLevelPreTokenizer:
		if re, ok := s.regex.(regexPattern); ok {
			return re.m
		}
	}
	return nil
}

func nfcOnly(n normalizer) bool {
	switch n := n.(type) {
	case nil:
		return true
	case unicodeNormalizer:
		return n.form == norm.NFC
	case sequenceNormalizer:
		for _, s := range n {
			if !nfcOnly(s) {
				return false
			}
		}
		return true
	}
	return false
}

// ProvesSeams reports whether Seam can ever prove a cut with this
// tokenizer (a caller skips preparing for it otherwise).
func (t *Tokenizer) ProvesSeams() bool { return t.seamFirst != nil }

// AppendEncode is Encode appending the ids to dst.
func (t *Tokenizer) AppendEncode(dst []int, text string) []int {
	sc := t.getScratch()
	dst = t.encodeInto(text, sc, dst)
	t.putScratch(sc)
	return dst
}

// MaxWhole is the longest text Encode encodes whole (longer ones are cut
// into chunks): Seam's proof is about the pipeline run on a whole text.
const MaxWhole = 2 * chunkBytes

// Seam reports whether the tokenizer proves, from x's last byte and y's
// first words alone, that a text cut where y starts encodes as its two
// sides apart: Encode(x+y+z) == Encode(x) ++ Encode(y+z) for every z, and
// for every x' ending in the same byte in place of x, as long as x+y+z is
// valid UTF-8 of at most MaxWhole bytes.
//
// The proof: x ends in printable ASCII (not a space) or common prose
// punctuation (endsSeam) and y opens with a space, and y holds a later
// space after such a character, at d; the window
// y[:d+1] holds no added token and the normalizer leaves it unchanged. No
// added token can then be found across the cut or past d (none holds a
// space or strips one), and the normalizer acts on each side apart. The
// first pre-tokenizer step's scanner (regex.Forward) decides each match
// from the text at and after it, and no match starting before such a space
// looks past it, nor tells it from the end of the text: the pieces before
// the cut are those of x alone; a match starts at the cut (checked on the
// window, since that match looks no further than d), so the cut is a piece
// boundary whatever came before, and the pieces after it are those of y+z
// alone. Later steps and the model work piece by piece, and none of the
// accepted steps or normalizers looks at where its input started.
func (t *Tokenizer) Seam(x, y string) bool {
	if t.seamFirst == nil || !endsSeam(x) || len(y) < 3 || y[0] != ' ' {
		return false
	}
	d := -1
	for i := 2; i < len(y); i++ {
		if y[i] == ' ' && endsSeam(y[:i]) {
			d = i
			break
		}
	}
	if d < 0 {
		return false
	}
	return t.seamWindow(y[:d+1])
}

// SeamEnd is Seam for a y that ends the text (nothing follows it, z
// empty): it reports whether Encode(x+y) == Encode(x) ++ Encode(y) for
// every x' ending in the same byte in place of x, x+y being valid UTF-8
// of at most MaxWhole bytes. y needs no later space: Seam's proof holds
// with y itself as the window, since no match looks past the text's end.
func (t *Tokenizer) SeamEnd(x, y string) bool {
	if t.seamFirst == nil || !endsSeam(x) || len(y) < 2 || y[0] != ' ' {
		return false
	}
	return t.seamWindow(y)
}

// seamWindow checks Seam's window w (a space, then what the cut's first
// match may read): valid UTF-8, no added token, unchanged by the
// normalizer, and a first-step match starts at its beginning.
func (t *Tokenizer) seamWindow(w string) bool {
	if !utf8.ValidString(w) {
		return false
	}
	if t.rawMatcher != nil {
		var buf [2]piece
		if ps := t.rawMatcher.split(piece{text: w, id: -1}, buf[:0]); len(ps) != 1 || ps[0].id >= 0 {
			return false
		}
	}
	if t.normalizer != nil {
		if n, _ := t.normalizer.normalize(w, false); n != w {
			return false
		}
	}
	var spans [4][2]int
	m := t.seamFirst.FindAll(w, spans[:0])
	return len(m) > 0 && m[0][0] == 0
}

// endsSeam reports whether s ends in a character a seam may follow:
// printable ASCII other than the space, or punctuation of U+2010–U+2027
// (dashes, quotation marks, the ellipsis, which prose uses at the end of a
// word). Each is its own NFC form and composes with nothing after it, is
// not whitespace, and none of the scanners reads past a space after it
// (TestForwardCut).
func endsSeam(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r > ' ' && r < 0x7f || r >= 0x2010 && r <= 0x2027
}

// TextSeams returns, in increasing order, the indexes k (0 < k < len(ids))
// with their byte offsets off, as {k, off}, at which text, whose own encoding (Encode) ids must be, splits into two
// texts encoding as ids[:k] and ids[k:]: text[:off] and text[off:], off
// being the bytes of ids[:k]. A caller can then take any stretch of ids
// between two such indexes (or an end) as the encoding of its text. nil
// where the tokenizer cannot tell (no ByteLevel decode table, no seams).
//
// Why: at each k returned, Seam(text[:off], text[off:]) holds, so
// Encode(text) == Encode(text[:off]) ++ Encode(text[off:]). Each token's
// bytes are not empty and the ids' bytes are text itself, which the
// normalizer (NFC at most) leaves unchanged; a prefix of an NFC text cut
// before a space is NFC, so Encode(text[:off]) has exactly off bytes, and
// the token count at which the bytes of ids reach off is k alone. A
// stretch between two indexes follows the same way, Seam depending on the
// text before the cut through its last byte only.
func (t *Tokenizer) TextSeams(text string, ids []int) [][2]int32 {
	if t.seamFirst == nil || t.byteDecode == nil || len(text) > MaxWhole || len(ids) < 2 || !utf8.ValidString(text) {
		return nil
	}
	if t.normalizer != nil {
		if n, _ := t.normalizer.normalize(text, false); n != text {
			return nil
		}
	}
	table := t.byteDecode()
	offs := make([]int, len(ids))
	off := 0
	for i, id := range ids {
		if id < 0 || id >= len(table) || len(table[id]) == 0 {
			return nil
		}
		b := table[id]
		if off+len(b) > len(text) || text[off:off+len(b)] != string(b) {
			return nil
		}
		offs[i] = off
		off += len(b)
	}
	if off != len(text) {
		return nil
	}
	var seams [][2]int32
	for k := 1; k < len(ids); k++ {
		if o := offs[k]; text[o] == ' ' && t.Seam(text[:o], text[o:]) {
			seams = append(seams, [2]int32{int32(k), int32(o)})
		}
	}
	return seams
}
