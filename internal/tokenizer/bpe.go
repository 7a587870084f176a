package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// model turns one pre-tokenized word into ids.
type model interface {
	tokenize(word string, sc *scratch, dst []int) []int
	idToToken(id int) (string, bool)
}

func buildModel(raw json.RawMessage) (model, error) {
	kind, err := typeOf(raw)
	if err != nil {
		// Old files omit the model type; Rust guesses from the fields.
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil {
			return nil, err
		}
		switch {
		case probe["merges"] != nil:
			kind = "BPE"
		case probe["max_input_chars_per_word"] != nil:
			kind = "WordPiece"
		default:
			return nil, err
		}
	}
	switch kind {
	case "BPE":
		return newBPE(raw)
	case "WordPiece":
		return newWordPiece(raw)
	case "WordLevel":
		return newWordLevel(raw)
	case "Unigram":
		return newUnigram(raw)
	default:
		return nil, fmt.Errorf("unsupported model type %q", kind)
	}
}

type mergeValue struct {
	rank  int32
	newID int32
}

type bpe struct {
	// opts are the settings read, kept for the load cache.
	opts   bpeOptions
	vocab  map[string]int
	vocabR map[int]string
	// byID is vocabR as a slice (Decode looks up every id), when the ids
	// are dense enough; known says which entries are ids.
	byID                 []string
	known                []bool
	merges               *mergeTable
	unk                  string
	unkID                int
	hasUnk               bool
	continuingPrefix     string
	endOfWordSuffix      string
	fuseUnk, byteFallbck bool
	ignoreMerges         bool
	byteFallbackIDs      [256]int // id of "<0xXX>", or -1

	// byteLevel is set when the pre-tokenizer's last step is a ByteLevel
	// mapping that was switched off: words then arrive as raw bytes, and
	// each byte's mapped character is looked up through byteIDs.
	byteLevel bool
	byteIDs   [256]int

	// splitBeforeSpace is set when no vocabulary token has a character
	// other than "▁" directly before a "▁": then no merge can join the end
	// of one "▁word" to the next, and a long SentencePiece word (a whole
	// line) can be merged piece by piece, each piece cached, with the ids
	// Rust's single pass gives.
	splitBeforeSpace bool
}

const spaceMark = "▁"

// noMergeAcrossSpaceMark checks the vocabulary property splitBeforeSpace
// relies on.
func noMergeAcrossSpaceMark(vocab map[string]int) bool {
	for tok := range vocab {
		i := strings.Index(tok, spaceMark)
		for i > 0 {
			if !strings.HasSuffix(tok[:i], spaceMark) {
				return false
			}
			j := strings.Index(tok[i+len(spaceMark):], spaceMark)
			if j < 0 {
				break
			}
			i += len(spaceMark) + j
		}
	}
	return true
}

func pairKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// bpeOptions are a BPE model's settings: everything of its JSON but the
// vocabulary and merges (which the load cache stores in binary form).
type bpeOptions struct {
	Type                    string   `json:"type"`
	Dropout                 *float64 `json:"dropout"`
	UnkToken                *string  `json:"unk_token"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	FuseUnk                 bool     `json:"fuse_unk"`
	ByteFallback            bool     `json:"byte_fallback"`
	IgnoreMerges            bool     `json:"ignore_merges"`
}

func newBPE(raw json.RawMessage) (*bpe, error) {
	var v struct {
		bpeOptions
		Vocab  map[string]int    `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("BPE: %w", err)
	}
	if v.Vocab == nil {
		v.Vocab = map[string]int{}
	}
	vocabR := invert(v.Vocab)
	byID, known := denseVocab(vocabR)
	m, err := newBPEWith(v.bpeOptions, v.Vocab, vocabR, byID, known)
	if err != nil {
		return nil, err
	}
	m.merges = newMergeTable(len(v.Merges))
	for i, rm := range v.Merges {
		a, b, err := parseMerge(rm)
		if err != nil {
			return nil, fmt.Errorf("BPE: merges[%d]: %w", i, err)
		}
		aID, ok := m.vocab[a]
		if !ok {
			return nil, fmt.Errorf("BPE: merges[%d]: token %q is not in the vocabulary", i, a)
		}
		bID, ok := m.vocab[b]
		if !ok {
			return nil, fmt.Errorf("BPE: merges[%d]: token %q is not in the vocabulary", i, b)
		}
		if len(b) < len(m.continuingPrefix) {
			return nil, fmt.Errorf("BPE: merges[%d]: %q is shorter than continuing_subword_prefix", i, b)
		}
		merged := a + b[len(m.continuingPrefix):]
		newID, ok := m.vocab[merged]
		if !ok {
			return nil, fmt.Errorf("BPE: merges[%d]: merged token %q is not in the vocabulary", i, merged)
		}
		// A repeated pair keeps its last rank, as Rust's map collect does.
		m.merges.put(pairKey(aID, bID), mergeValue{rank: int32(i), newID: int32(newID)})
	}
	return m, nil
}

// newBPEWith makes a BPE model without merges from its settings and
// vocabulary (vocabR its inverse, byID and known its dense form or nil).
func newBPEWith(o bpeOptions, vocab map[string]int, vocabR map[int]string, byID []string, known []bool) (*bpe, error) {
	if o.Dropout != nil && *o.Dropout != 0 {
		return nil, fmt.Errorf("BPE: dropout %v is random by design; only dropout off (null or 0) gives reproducible counts", *o.Dropout)
	}
	m := &bpe{
		opts:         o,
		vocab:        vocab,
		vocabR:       vocabR,
		byID:         byID,
		known:        known,
		fuseUnk:      o.FuseUnk,
		byteFallbck:  o.ByteFallback,
		ignoreMerges: o.IgnoreMerges,
	}
	if o.UnkToken != nil {
		m.unk = *o.UnkToken
		id, ok := m.vocab[m.unk]
		if !ok {
			return nil, fmt.Errorf("BPE: unk_token %q is not in the vocabulary", m.unk)
		}
		m.unkID, m.hasUnk = id, true
	}
	if o.ContinuingSubwordPrefix != nil {
		m.continuingPrefix = *o.ContinuingSubwordPrefix
	}
	if o.EndOfWordSuffix != nil {
		m.endOfWordSuffix = *o.EndOfWordSuffix
	}
	m.splitBeforeSpace = m.continuingPrefix == "" && m.endOfWordSuffix == "" && noMergeAcrossSpaceMark(m.vocab)
	m.byteFallbackIDs = byteFallbackIDs(m.vocab)
	return m, nil
}

// parseMerge reads a merge written as "a b" or as ["a", "b"]. The first
// byte says which, so a file of pairs never pays for a failed decode.
func parseMerge(raw json.RawMessage) (string, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "", err
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok || strings.Contains(b, " ") {
			return "", "", fmt.Errorf("merge %q is not two tokens separated by one space", s)
		}
		return a, b, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", errors.New(`merge is neither "a b" nor ["a", "b"]`)
	}
	return pair[0], pair[1], nil
}

// enableByteLevel switches the model to raw-byte input. It reports false,
// leaving the model unchanged, when some byte's mapped character is not in
// the vocabulary or prefixes/suffixes make characters depend on position.
func (m *bpe) enableByteLevel() bool {
	if m.continuingPrefix != "" || m.endOfWordSuffix != "" {
		return false
	}
	for b := 0; b < 256; b++ {
		id, ok := m.vocab[byteToString[b]]
		if !ok {
			return false
		}
		m.byteIDs[b] = id
	}
	m.byteLevel = true
	return true
}

// wholeWord is ignore_merges' lookup of a whole word. Raw-byte words are
// looked up by their byte-level form, built on the stack: a second map
// keyed by raw bytes would cost every load about as much as the vocabulary
// map itself.
func (m *bpe) wholeWord(word string) (int, bool) {
	if !m.byteLevel {
		id, ok := m.vocab[word]
		return id, ok
	}
	var arr [256]byte
	buf := arr[:0]
	for i := 0; i < len(word); i++ {
		buf = append(buf, byteToString[word[i]]...)
	}
	id, ok := m.vocab[string(buf)] // no allocation: a map index by bytes
	return id, ok
}

func (m *bpe) idToToken(id int) (string, bool) {
	if id >= 0 && id < len(m.byID) {
		return m.byID[id], m.known[id]
	}
	if m.byID != nil {
		return "", false
	}
	t, ok := m.vocabR[id]
	return t, ok
}

// denseVocab lays vocabR out as a slice when its largest id is below
// twice its size (every real vocabulary); else none.
func denseVocab(vocabR map[int]string) ([]string, []bool) {
	top := -1
	for id := range vocabR {
		if id < 0 {
			return nil, nil
		}
		top = max(top, id)
	}
	if top >= 2*len(vocabR)+256 {
		return nil, nil
	}
	byID, known := make([]string, top+1), make([]bool, top+1)
	for id, tok := range vocabR {
		byID[id], known[id] = tok, true
	}
	return byID, known
}

func (m *bpe) tokenize(word string, sc *scratch, dst []int) []int {
	if word == "" {
		return dst
	}
	if m.ignoreMerges {
		if id, ok := m.wholeWord(word); ok {
			return append(dst, id)
		}
	}
	if m.splitBeforeSpace && !m.byteLevel && len(word) >= maxCachedWordLen {
		return m.tokenizeBySpaceMark(word, sc, dst)
	}
	return m.cachedMerge(word, sc, dst)
}

// tokenizeBySpaceMark merges each maximal "▁*[^▁]*" piece of word on its
// own (see splitBeforeSpace).
func (m *bpe) tokenizeBySpaceMark(word string, sc *scratch, dst []int) []int {
	start := 0
	for i := 0; i < len(word); {
		if strings.HasPrefix(word[i:], spaceMark) && i > 0 && !strings.HasSuffix(word[:i], spaceMark) {
			dst = m.cachedMerge(word[start:i], sc, dst)
			start = i
		}
		_, n := utf8.DecodeRuneInString(word[i:])
		i += n
	}
	return m.cachedMerge(word[start:], sc, dst)
}

// cachedMerge merges word through the calling goroutine's cache (sc may
// be nil: no cache); the cache has one user at a time, so no lock.
func (m *bpe) cachedMerge(word string, sc *scratch, dst []int) []int {
	if sc == nil || len(word) >= maxCachedWordLen {
		return m.mergeWord(word, dst)
	}
	if ids, ok := sc.cache[word]; ok {
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		return dst
	}
	start := len(dst)
	dst = m.mergeWord(word, dst)
	if sc.cache == nil {
		sc.cache = make(map[string][]int32, 1024)
	}
	if len(sc.cache) < maxCachedWords {
		ids := make([]int32, len(dst)-start)
		for i, id := range dst[start:] {
			ids[i] = int32(id)
		}
		sc.cache[strings.Clone(word)] = ids
	}
	return dst
}

// symbol is one node of the doubly linked list a word is merged in.
type symbol struct {
	id         int32
	prev, next int32
	gone       bool
}

// merge is a heap entry; key packs (rank, position) so that one integer
// comparison orders entries as Rust's Merge::cmp does.
type merge struct {
	key   uint64
	newID int32
}

func mergeEntry(rank, pos int32, newID int32) merge {
	return merge{key: uint64(uint32(rank))<<32 | uint64(uint32(pos)), newID: newID}
}

func (m merge) pos() int32 { return int32(uint32(m.key)) }

// wordState holds a word's merge buffers; pooled to keep the hot path free
// of allocations.
type wordState struct {
	syms []symbol
	heap []merge
}

var wordPool = sync.Pool{New: func() any { return &wordState{} }}

// mergeWord follows Rust's BPE::merge_word and Word::merge_all exactly: the
// initial symbols are characters (or bytes, or byte-fallback tokens, or
// unk), then merges pop from a min-heap ordered by (rank, position); an
// entry is skipped when its left symbol is gone, is last, or its pair no
// longer yields the same new id.
func (m *bpe) mergeWord(word string, dst []int) []int {
	st := wordPool.Get().(*wordState)
	defer wordPool.Put(st)
	syms := st.syms[:0]
	add := func(id int) {
		n := int32(len(syms))
		syms = append(syms, symbol{id: int32(id), prev: n - 1, next: n + 1})
	}
	if m.byteLevel {
		for i := 0; i < len(word); i++ {
			add(m.byteIDs[word[i]])
		}
	} else {
		unkPending := false
		unkID := 0
		for i := 0; i < len(word); {
			_, n := utf8.DecodeRuneInString(word[i:])
			s := word[i : i+n]
			first, last := i == 0, i+n == len(word)
			i += n
			if !first && m.continuingPrefix != "" {
				s = m.continuingPrefix + s
			}
			if last && m.endOfWordSuffix != "" {
				s += m.endOfWordSuffix
			}
			if id, ok := m.vocab[s]; ok {
				if unkPending {
					add(unkID)
					unkPending = false
				}
				add(id)
				continue
			}
			if m.byteFallbck && m.allBytesKnown(s) {
				for j := 0; j < len(s); j++ {
					add(m.byteFallbackIDs[s[j]])
				}
				continue
			}
			if m.hasUnk {
				if unkPending && !m.fuseUnk {
					add(unkID)
				}
				unkPending, unkID = true, m.unkID
			}
			// Without an unk token the character is dropped, as in Rust.
		}
		if unkPending {
			add(unkID)
		}
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	h := st.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if mv, ok := m.merges.get(pairKey(int(syms[i].id), int(syms[i+1].id))); ok {
			h = heapPush(h, mergeEntry(mv.rank, int32(i), mv.newID))
		}
	}
	for len(h) > 0 {
		var top merge
		top, h = heapPop(h)
		cur := &syms[top.pos()]
		if cur.gone || cur.next == -1 {
			continue
		}
		nextPos := cur.next
		right := syms[nextPos]
		mv, ok := m.merges.get(pairKey(int(cur.id), int(right.id)))
		if !ok || mv.newID != top.newID {
			continue
		}
		cur.id = top.newID
		cur.next = right.next
		syms[nextPos].gone = true
		if right.next != -1 {
			syms[right.next].prev = top.pos()
		}
		if cur.prev >= 0 {
			if mv, ok := m.merges.get(pairKey(int(syms[cur.prev].id), int(cur.id))); ok {
				h = heapPush(h, mergeEntry(mv.rank, cur.prev, mv.newID))
			}
		}
		if cur.next != -1 {
			if mv, ok := m.merges.get(pairKey(int(cur.id), int(syms[cur.next].id))); ok {
				h = heapPush(h, mergeEntry(mv.rank, top.pos(), mv.newID))
			}
		}
	}
	for _, s := range syms {
		if !s.gone {
			dst = append(dst, int(s.id))
		}
	}
	st.syms, st.heap = syms, h
	return dst
}

func (m *bpe) allBytesKnown(s string) bool {
	for i := 0; i < len(s); i++ {
		if m.byteFallbackIDs[s[i]] < 0 {
			return false
		}
	}
	return true
}

// The heap is 4-ary: shallower than a binary heap, which matters for the
// long words of SentencePiece models (a whole line is one word there).
func heapPush(h []merge, x merge) []merge {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p].key <= x.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapPop(h []merge) (merge, []merge) {
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	if n == 0 {
		return top, h
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if h[k].key < h[best].key {
				best = k
			}
		}
		if h[best].key >= x.key {
			break
		}
		h[i] = h[best]
		i = best
	}
	h[i] = x
	return top, h
}

// mergeTable is an open-addressing hash map from a packed id pair to its
// merge: the merge loop's hottest lookup, faster than a Go map.
type mergeTable struct {
	keys  []uint64 // 0 marks an empty slot; stored keys are pair+1
	vals  []mergeValue
	mask  uint64
	shift uint
}

func newMergeTable(n int) *mergeTable {
	size := 16
	for size < n*2 {
		size <<= 1
	}
	shift := uint(64)
	for s := size; s > 1; s >>= 1 {
		shift--
	}
	return &mergeTable{keys: make([]uint64, size), vals: make([]mergeValue, size), mask: uint64(size - 1), shift: shift}
}

func (t *mergeTable) slot(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> t.shift }

func (t *mergeTable) put(pair uint64, v mergeValue) {
	k := pair + 1
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		if t.keys[i] == 0 || t.keys[i] == k {
			t.keys[i], t.vals[i] = k, v
			return
		}
	}
}

func (t *mergeTable) get(pair uint64) (mergeValue, bool) {
	k := pair + 1
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			return t.vals[i], true
		case 0:
			return mergeValue{}, false
		}
	}
}

// maxCachedWordLen and maxCachedWords bound each cache as Rust bounds its
// one (long words are not cached; a full cache stops growing), with room
// for 4× Rust's 10 000 words since each caller has its own: speed only.
const (
	maxCachedWordLen = 256
	maxCachedWords   = 10000 * 4
)
