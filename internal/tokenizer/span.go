package tokenizer

import (
	"unicode/utf8"
	"unsafe"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// spanSteps returns the pre-tokenizer's steps when EncodeSpan can reason
// about them, or nil: every step is a Split (isolated, not inverted) or a
// ByteLevel (no prefix space, bytes left to the model) on one of the
// forward scanners (regex.Forward), so that every step cuts its input
// into contiguous pieces, ignores where the input started, and matches
// forward only. Added tokens must not be single_word (the only rule that
// looks at a token's neighbours before accepting it) and none may match
// after normalization.
func (t *Tokenizer) spanSteps() []preTokenizer {
	if t.normMatcher != nil {
		return nil
	}
	for _, tok := range t.added {
		if tok.SingleWord && !tok.Normalized {
			return nil
		}
	}
	var steps []preTokenizer
	switch p := t.preTokenizer.(type) {
	case sequencePreTokenizer:
		steps = p
	case nil:
		return nil
	default:
		steps = []preTokenizer{p}
	}
	for _, s := range steps {
		switch s := s.(type) {
		case *splitPreTokenizer:
			re, ok := s.pattern.(regexPattern)
			if !ok || s.behavior != isolated || s.invert || !regex.Forward(re.m) {
				return nil
			}
		case *byteLevelPreTokenizer:
			if s.addPrefixSpace || s.mapBytes {
				return nil
			}
			if s.regex != nil {
				re, ok := s.regex.(regexPattern)
				if !ok || !regex.Forward(re.m) {
					return nil
				}
			}
		default:
			return nil
		}
	}
	return steps
}

// EncodeSpan returns Encode(s) and, where it can prove it from that same
// work, Count(s[p:q]) with ok set; otherwise ok is false (span 0) and the
// caller counts the span itself. The ids are Encode(s) either way.
//
// The proof, for the pipelines spanSteps accepts: s[p:q] lies inside one
// text piece P between added tokens (a piece in which no added token
// starts, so none starts in s[p:q] alone either), P and s[p:q] are left
// unchanged by the normalizer, and p is where a piece of the first
// pre-tokenizer step starts. The first step's scan of s[p:q] alone then
// visits the positions the scan of P visits from p, finds the same
// matches, and so cuts the same pieces, up to a piece start r inside the
// span where an ASCII letter is followed by a space: no match starting
// before r looks past r (regex.Forward), so that the span's end, after r,
// changes nothing before it. Later steps and the model work piece by
// piece, so the span's pieces before r give the ids the span alone gives
// there; the rest, s[r:q], is pre-tokenized and counted on its own (its
// scan is the span's from r). Where the span ends P, r is q and there is
// no rest.
func (t *Tokenizer) EncodeSpan(s string, p, q int) (ids []int, span int, ok bool) {
	return t.AppendEncodeSpan(nil, s, p, q)
}

// AppendEncodeSpan is EncodeSpan appending the ids to dst: a caller that
// encodes many requests reuses one buffer (a growing ids slice costs about
// a third of the encoding).
func (t *Tokenizer) AppendEncodeSpan(dst []int, s string, p, q int) (ids []int, span int, ok bool) {
	sc := t.getScratch()
	defer t.putScratch(sc)
	if t.spanPre == nil || p < 0 || q > len(s) || p >= q || len(s) > 2*chunkBytes ||
		!utf8.ValidString(s) || !utf8.RuneStart(s[p]) || (q < len(s) && !utf8.RuneStart(s[q])) {
		return t.encodeInto(s, sc, dst), 0, false
	}
	steps := t.spanPre
	ids = dst
	raw := t.rawMatcher.split(piece{text: s, atOrigin: true, id: -1}, sc.spanRaw[:0])
	defer func() { sc.spanRaw = raw[:0] }()
	done := false
	for _, rp := range raw {
		if rp.id >= 0 {
			ids = append(ids, rp.id)
			continue
		}
		off := offsetIn(s, rp.text)
		if !done && off <= p && q <= off+len(rp.text) {
			done = true
			ids, span, ok = t.encodeSpanPiece(rp, p-off, q-off, steps, sc, ids)
			continue
		}
		// A text piece holds no added token: encodeChunk's own split of it
		// finds none, and the rest of its pipeline is the same.
		ids = t.encodeChunk(rp.text, rp.atOrigin, sc, ids)
	}
	return ids, span, ok
}

// encodeSpanPiece appends the ids of text piece rp and counts its span
// [p, q) (see EncodeSpan).
func (t *Tokenizer) encodeSpanPiece(rp piece, p, q int, steps []preTokenizer, sc *scratch, ids []int) ([]int, int, bool) {
	text, atOrigin := rp.text, rp.atOrigin
	if t.normalizer != nil {
		n, o := t.normalizer.normalize(text, atOrigin)
		if n != text {
			return t.encodeChunk(rp.text, rp.atOrigin, sc, ids), 0, false
		}
		atOrigin = o
		if n, _ := t.normalizer.normalize(text[p:q], true); n != text[p:q] {
			return t.encodeChunk(rp.text, rp.atOrigin, sc, ids), 0, false
		}
	}
	first := steps[0].split(piece{text: text, atOrigin: atOrigin, id: -1}, sc, sc.spanFirst[:0])
	defer func() { sc.spanFirst = first[:0] }()
	// Where the first step's pieces start; they must tile text.
	starts := sc.spanStarts[:0]
	defer func() { sc.spanStarts = starts[:0] }()
	at := 0
	for _, f := range first {
		off := offsetIn(text, f.text)
		if off != at {
			return t.encodeChunk(rp.text, rp.atOrigin, sc, ids), 0, false
		}
		starts = append(starts, off)
		at += len(f.text)
	}
	if at != len(text) {
		return t.encodeChunk(rp.text, rp.atOrigin, sc, ids), 0, false
	}
	pStart, r := false, -1
	if q == len(text) {
		r = q
	}
	for i := len(starts) - 1; i >= 0; i-- {
		x := starts[i]
		if x == p {
			pStart = true
			break
		}
		if x < p {
			break
		}
		if r < 0 && x < q && text[x] == ' ' && isASCIILetter(text[x-1]) {
			r = x
		}
	}
	ok := pStart && r >= 0
	rest := sequencePreTokenizer(steps[1:])
	span := 0
	for i, f := range first {
		before := len(ids)
		if len(rest) == 0 {
			ids = t.model.tokenize(f.text, sc, ids)
		} else {
			fin := rest.split(f, sc, sc.spanRest[:0])
			for _, g := range fin {
				ids = t.model.tokenize(g.text, sc, ids)
			}
			sc.spanRest = fin[:0]
		}
		if ok && starts[i] >= p && starts[i] < r {
			span += len(ids) - before
		}
	}
	if !ok {
		return ids, 0, false
	}
	if r < q {
		tail := t.piecesOf(piece{text: text[r:q], id: -1}, steps, sc)
		span += tail
	}
	return ids, span, true
}

// piecesOf counts the ids of p pre-tokenized by steps and modelled, with
// neither added tokens nor the normalizer applied.
func (t *Tokenizer) piecesOf(p piece, steps []preTokenizer, sc *scratch) int {
	var pre preTokenizer = sequencePreTokenizer(steps)
	pieces := pre.split(p, sc, sc.spanRest[:0])
	ids := sc.seamCut[:0]
	for _, g := range pieces {
		ids = t.model.tokenize(g.text, sc, ids)
	}
	sc.spanRest, sc.seamCut = pieces[:0], ids[:0]
	return len(ids)
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// offsetIn is where sub, a substring of s, starts in s; -1 when it is not
// one (a piece made by a rewrite, not cut from s).
func offsetIn(s, sub string) int {
	if len(sub) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.StringData(sub))) - uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if d > uintptr(len(s)) || int(d)+len(sub) > len(s) {
		return -1
	}
	return int(d)
}
