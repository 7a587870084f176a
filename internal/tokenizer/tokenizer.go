// Package tokenizer is an exact pure-Go implementation of the HuggingFace
// `tokenizers` pipeline (Rust 0.22) for tokenizer.json files: added tokens,
// normalizer, pre-tokenizer, model, post-processor and decoder. Encode
// gives the ids Rust gives with add_special_tokens=false; every component
// it cannot reproduce exactly is refused at load time, by name.
//
// Invalid UTF-8 cannot reach the Rust library (its strings are always
// valid). Here each maximal subpart of an ill-formed sequence (Unicode
// §3.9) is replaced with U+FFFD first, as Python's
// bytes.decode(errors="replace") does, so a caller that reads bytes from a
// file gets the count Python-side code would get.
package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// Tokenizer encodes text to ids and back. It is safe for concurrent use.
type Tokenizer struct {
	normalizer    normalizer
	preTokenizer  preTokenizer
	model         model
	postProcessor postProcessor
	decoder       decoder

	added        []AddedToken
	addedByID    map[int]*AddedToken
	rawMatcher   *addedMatcher // normalized=false tokens, matched on the raw input
	normMatcher  *addedMatcher // normalized=true tokens, matched after normalization
	normPatterns []AddedToken  // normMatcher's tokens with their normalized content

	scratch sync.Pool
	// caches hold the BPE word caches between calls. Each call takes one
	// and gives it back, so a cache has one user at a time and needs no
	// lock (Rust shares one cache behind a lock instead; caching changes
	// speed only); a channel, unlike sync.Pool, keeps them across garbage
	// collections.
	caches chan map[string][]int32
	// spanPre is the pre-tokenizer's steps when EncodeSpan can prove
	// span counts (see spanSteps), else nil.
	spanPre []preTokenizer
	// seamFirst is the first pre-tokenizer step's matcher when Seam can
	// prove cuts (see seamMatcher), else nil.
	seamFirst regex.Matcher
	// byteDecode is each id's decoded bytes when the decoder is ByteLevel
	// alone (decoding then joins them), built on first use; nil otherwise.
	byteDecode func() [][]byte
}

func (t *Tokenizer) setAddedTokens(tokens []AddedToken) error {
	t.added = tokens
	t.addedByID = make(map[int]*AddedToken, len(tokens))
	var raw []*AddedToken
	for i := range tokens {
		tok := &t.added[i]
		t.addedByID[tok.ID] = tok
		if !tok.Normalized {
			raw = append(raw, tok)
		}
	}
	// Tokens matched after normalization are matched in their normalized
	// form, as Rust's refresh_added_tokens computes it.
	t.normPatterns = nil
	for _, tok := range tokens {
		if tok.Normalized {
			if t.normalizer != nil {
				tok.Content, _ = t.normalizer.normalize(tok.Content, true)
			}
			t.normPatterns = append(t.normPatterns, tok)
		}
	}
	var norm []*AddedToken
	for i := range t.normPatterns {
		norm = append(norm, &t.normPatterns[i])
	}
	t.rawMatcher = newAddedMatcher(raw)
	t.normMatcher = newAddedMatcher(norm)
	return nil
}

// finish applies load-time optimisations that do not change results.
func (t *Tokenizer) finish() {
	t.scratch.New = func() any { return &scratch{} }
	t.caches = make(chan map[string][]int32, 64)
	defer func() { t.spanPre = t.spanSteps(); t.seamFirst = t.seamMatcher() }()
	t.byteDecode = nil
	if t.byteLevelDecoderOnly() {
		t.byteDecode = sync.OnceValue(t.byteDecodeTable)
	}
	// A trailing ByteLevel step only maps bytes to characters that the BPE
	// vocabulary then looks up; a byte-keyed model skips the round trip.
	m, ok := t.model.(*bpe)
	if !ok {
		return
	}
	last := t.preTokenizer
	if seq, ok := last.(sequencePreTokenizer); ok && len(seq) > 0 {
		last = seq[len(seq)-1]
	}
	if bl, ok := last.(*byteLevelPreTokenizer); ok && m.enableByteLevel() {
		bl.mapBytes = false
	}
}

// scratch holds the buffers of one encode call.
type scratch struct {
	// ordinary: added tokens are not matched in the text (EncodeOrdinary).
	ordinary     bool
	pieces, next []piece
	seqA, seqB   []piece // sequencePreTokenizer's alternating buffers
	spans        [][2]int
	segs         []seg
	ids          []int
	// seamWhole and seamCut are the ids cutsCleanly compares.
	seamWhole, seamCut []int
	// cache maps words to their BPE ids; see Tokenizer.caches.
	cache map[string][]int32
	// EncodeSpan's buffers: the input's added-token split, the span
	// piece's first pre-tokenizer step and where its pieces start, and the
	// later steps' pieces of one piece.
	spanRaw, spanFirst, spanRest []piece
	spanStarts                   []int
}

// Encode returns the ids of text without special tokens
// (add_special_tokens=false).
func (t *Tokenizer) Encode(text string) []int {
	sc := t.getScratch()
	ids := t.encodeInto(text, sc, nil)
	t.putScratch(sc)
	return ids
}

// EncodeOrdinary is Encode with no added token matched in text: a
// special token's spelling is encoded as ordinary text (tiktoken's
// encode_ordinary, which openai_harmony uses for a message's text).
func (t *Tokenizer) EncodeOrdinary(text string) []int {
	sc := t.getScratch()
	sc.ordinary = true
	ids := t.encodeInto(text, sc, nil)
	sc.ordinary = false
	t.putScratch(sc)
	return ids
}

// CountOrdinaryBytes is len(EncodeOrdinary(b)).
func (t *Tokenizer) CountOrdinaryBytes(b []byte) int {
	sc := t.getScratch()
	sc.ordinary = true
	n := 0
	t.eachChunk(validText(unsafe.String(unsafe.SliceData(b), len(b))), sc, func(part string, atOrigin bool) {
		sc.ids = t.encodeChunk(part, atOrigin, sc, sc.ids[:0])
		n += len(sc.ids)
	})
	sc.ordinary = false
	t.putScratch(sc)
	return n
}

// Count returns len(Encode(text)) without keeping the ids.
func (t *Tokenizer) Count(text string) int {
	sc := t.getScratch()
	n := 0
	t.eachChunk(validText(text), sc, func(part string, atOrigin bool) {
		sc.ids = t.encodeChunk(part, atOrigin, sc, sc.ids[:0])
		n += len(sc.ids)
	})
	t.putScratch(sc)
	return n
}

// CountBytes is Count over text held in a byte slice, without copying it
// into a string: the tokenizer keeps no reference to its input after a
// call (cached words are cloned), so the caller may reuse b at once.
func (t *Tokenizer) CountBytes(b []byte) int {
	return t.Count(unsafe.String(unsafe.SliceData(b), len(b)))
}

func (t *Tokenizer) getScratch() *scratch {
	sc := t.scratch.Get().(*scratch)
	select {
	case sc.cache = <-t.caches:
	default:
		sc.cache = nil // bpe makes one on first use
	}
	return sc
}

func (t *Tokenizer) putScratch(sc *scratch) {
	if sc.cache != nil {
		select {
		case t.caches <- sc.cache:
		default: // more callers at once than kept caches: let it go
		}
		sc.cache = nil
	}
	t.scratch.Put(sc)
}

// EncodeWithSpecialTokens returns the ids with the post-processor's special
// tokens added (add_special_tokens=true), for a single sequence.
func (t *Tokenizer) EncodeWithSpecialTokens(text string) []int {
	ids := t.Encode(text)
	if t.postProcessor != nil {
		ids = t.postProcessor.process(ids)
	}
	return ids
}

// NumSpecialTokensToAdd is how many ids the post-processor adds to a single
// sequence (or a pair).
func (t *Tokenizer) NumSpecialTokensToAdd(pair bool) int {
	if t.postProcessor == nil {
		return 0
	}
	return t.postProcessor.added(pair)
}

func (t *Tokenizer) encodeInto(text string, sc *scratch, ids []int) []int {
	t.eachChunk(validText(text), sc, func(part string, atOrigin bool) {
		ids = t.encodeChunk(part, atOrigin, sc, ids)
	})
	return ids
}

func validText(text string) string {
	if !utf8.ValidString(text) {
		return validUTF8Lossy([]byte(text))
	}
	return text
}

// Long texts are encoded chunk by chunk, so that the pieces of one
// encode (tens of bytes per few bytes of text) take memory for one chunk,
// not for a whole 50 MB line.
const (
	// chunkBytes is the size a chunk is cut at; a text up to twice it is
	// encoded whole.
	chunkBytes = 256 << 10
	// seamBytes is the context checked on each side of a cut.
	seamBytes = 4 << 10
	// cutSearch bounds how far past chunkBytes a cut is looked for, and
	// cutTries how many candidates are checked.
	cutSearch = 64 << 10
	cutTries  = 64
)

// eachChunk calls fn on successive parts of text whose encodings, joined,
// are text's own. A cut is taken only where encoding seamBytes of text on
// each side of it gives the same ids cut as uncut: added tokens, merges,
// normalizer and pre-tokenizer context then agree across the seam (the
// pipelines of real tokenizers look a few characters around a piece). A
// text with no such cut (64 KiB without a space before a word, or 64
// candidates that fail the check) is encoded whole.
func (t *Tokenizer) eachChunk(text string, sc *scratch, fn func(part string, atOrigin bool)) {
	atOrigin := true
	for len(text) > 2*chunkBytes {
		cut := t.findCut(text, sc)
		if cut < 0 {
			break
		}
		fn(text[:cut], atOrigin)
		text, atOrigin = text[cut:], false
	}
	if text != "" {
		fn(text, atOrigin)
	}
}

// findCut returns a place past chunkBytes where text can be cut (see
// eachChunk), or -1. It tries only spaces before a letter or digit, where
// byte-level and SentencePiece pre-tokenizers always start a word.
func (t *Tokenizer) findCut(text string, sc *scratch) int {
	end := min(len(text)-seamBytes, chunkBytes+cutSearch)
	tries := 0
	for p := chunkBytes; p < end && tries < cutTries; p++ {
		if text[p] == ' ' && isASCIIAlnum(text[p+1]) {
			tries++
			if t.cutsCleanly(text, p, sc) {
				return p
			}
		}
	}
	// No other boundary is tried: inside one long pre-token (a letter run
	// without spaces) BPE pairs up depending on where the run starts, which
	// may lie outside the checked seam, so a seam that agrees proves nothing.
	return -1
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// cutsCleanly reports whether the text around p encodes to the same ids
// cut at p as whole.
func (t *Tokenizer) cutsCleanly(text string, p int, sc *scratch) bool {
	lo, hi := p-seamBytes, p+seamBytes
	for !utf8.RuneStart(text[lo]) {
		lo++
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi--
	}
	sc.seamWhole = t.encodeChunk(text[lo:hi], false, sc, sc.seamWhole[:0])
	sc.seamCut = t.encodeChunk(text[lo:p], false, sc, sc.seamCut[:0])
	sc.seamCut = t.encodeChunk(text[p:hi], false, sc, sc.seamCut)
	return slices.Equal(sc.seamWhole, sc.seamCut)
}

// encodeChunk appends the ids of text (valid UTF-8) to ids; atOrigin says
// whether text starts the input (Metaspace and Prepend act there only).
func (t *Tokenizer) encodeChunk(text string, atOrigin bool, sc *scratch, ids []int) []int {
	if text == "" {
		return ids
	}
	pieces := append(sc.pieces[:0], piece{text: text, atOrigin: atOrigin, id: -1})
	if !sc.ordinary {
		pieces = t.rawMatcher.split(pieces[0], pieces[:0])
	}
	if t.normalizer != nil || t.normMatcher != nil {
		next := sc.next[:0]
		for _, p := range pieces {
			if p.id >= 0 {
				next = append(next, p)
				continue
			}
			if t.normalizer != nil {
				p.text, p.atOrigin = t.normalizer.normalize(p.text, p.atOrigin)
			}
			if sc.ordinary {
				next = append(next, p)
				continue
			}
			next = t.normMatcher.split(p, next)
		}
		pieces, sc.next = next, pieces
	}
	if t.preTokenizer != nil {
		next := sc.next[:0]
		for _, p := range pieces {
			if p.id >= 0 {
				next = append(next, p)
				continue
			}
			next = t.preTokenizer.split(p, sc, next)
		}
		pieces, sc.next = next, pieces
	}
	for _, p := range pieces {
		if p.id >= 0 {
			ids = append(ids, p.id)
			continue
		}
		ids = t.model.tokenize(p.text, sc, ids)
	}
	sc.pieces, sc.next = pieces[:0], sc.next[:0]
	return ids
}

// Decode turns ids back into text as Rust's Tokenizer::decode does; unknown
// ids are skipped, special tokens too when skipSpecial is set.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	if !skipSpecial && t.byteDecode != nil {
		// ByteLevel decoding maps each token's characters to bytes on its
		// own, so each id's bytes can be mapped once: no map lookup and
		// no token strings per id (compose --trace decodes corpus windows).
		table := t.byteDecode()
		n := 0
		for _, id := range ids {
			if id >= 0 && id < len(table) {
				n += len(table[id])
			}
		}
		buf := make([]byte, 0, n)
		for _, id := range ids {
			if id >= 0 && id < len(table) {
				buf = append(buf, table[id]...)
			}
		}
		return validUTF8Lossy(buf)
	}
	return t.decodeChain(ids, skipSpecial)
}

// decodeChain is Decode through the decoder chain, token by token.
func (t *Tokenizer) decodeChain(ids []int, skipSpecial bool) string {
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if tok, ok := t.addedByID[id]; ok {
			if skipSpecial && tok.Special {
				continue
			}
			tokens = append(tokens, tok.Content)
			continue
		}
		if s, ok := t.model.idToToken(id); ok {
			tokens = append(tokens, s)
		}
	}
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	return strings.Join(t.decoder.decodeChain(tokens), "")
}

// byteLevelDecoderOnly says the decoder is ByteLevel alone (or a Sequence
// of just it) over a dense BPE vocabulary: Decode's table applies.
func (t *Tokenizer) byteLevelDecoderOnly() bool {
	d := t.decoder
	if seq, ok := d.(sequenceDecoder); ok && len(seq) == 1 {
		d = seq[0]
	}
	if _, ok := d.(byteLevelDecoder); !ok {
		return false
	}
	m, ok := t.model.(*bpe)
	return ok && m.byID != nil
}

// byteDecodeTable is each id's bytes as the ByteLevel decoder gives them,
// added tokens' content first as Decode takes it; unknown ids are empty,
// as Decode skips them. Ids past the table are unknown.
func (t *Tokenizer) byteDecodeTable() [][]byte {
	size := len(t.model.(*bpe).byID)
	for id := range t.addedByID {
		size = max(size, id+1)
	}
	table := make([][]byte, size)
	for id := range table {
		var s string
		if tok, ok := t.addedByID[id]; ok {
			s = tok.Content
		} else if tokStr, ok := t.model.idToToken(id); ok {
			s = tokStr
		} else {
			continue
		}
		table[id] = appendByteLevelUnmap(nil, s)
	}
	return table
}
