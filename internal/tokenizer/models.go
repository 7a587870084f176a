package tokenizer

import (
	"fmt"
	"math"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// wordPiece is BERT's greedy longest-match-first model.
type wordPiece struct {
	vocab    map[string]int
	vocabR   map[int]string
	unkID    int
	prefix   string
	maxChars int
}

func newWordPiece(raw json.RawMessage) (*wordPiece, error) {
	v := struct {
		Vocab                   map[string]int `json:"vocab"`
		UnkToken                string         `json:"unk_token"`
		ContinuingSubwordPrefix string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int            `json:"max_input_chars_per_word"`
	}{UnkToken: "[UNK]", ContinuingSubwordPrefix: "##", MaxInputCharsPerWord: 100}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("WordPiece: %w", err)
	}
	unk, ok := v.Vocab[v.UnkToken]
	if !ok {
		return nil, fmt.Errorf("WordPiece: unk_token %q is not in the vocabulary", v.UnkToken)
	}
	return &wordPiece{vocab: v.Vocab, vocabR: invert(v.Vocab), unkID: unk, prefix: v.ContinuingSubwordPrefix, maxChars: v.MaxInputCharsPerWord}, nil
}

// byteFallbackIDs maps each byte to the id of its "<0xXX>" token, -1 where
// the vocabulary has none.
func byteFallbackIDs(vocab map[string]int) [256]int {
	var ids [256]int
	for b := range ids {
		ids[b] = -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			ids[b] = id
		}
	}
	return ids
}

func invert(vocab map[string]int) map[int]string {
	r := make(map[int]string, len(vocab))
	for tok, id := range vocab {
		r[id] = tok
	}
	return r
}

func (w *wordPiece) idToToken(id int) (string, bool) { t, ok := w.vocabR[id]; return t, ok }

func (w *wordPiece) tokenize(word string, _ *scratch, dst []int) []int {
	if word == "" {
		return dst
	}
	if utf8.RuneCountInString(word) > w.maxChars {
		return append(dst, w.unkID)
	}
	startLen := len(dst)
	for start := 0; start < len(word); {
		end := len(word)
		found := -1
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = w.prefix + sub
			}
			if id, ok := w.vocab[sub]; ok {
				found = id
				break
			}
			_, n := utf8.DecodeLastRuneInString(word[start:end])
			end -= n
		}
		if found < 0 {
			return append(dst[:startLen], w.unkID)
		}
		dst = append(dst, found)
		start = end
	}
	return dst
}

// wordLevel maps whole words to ids, unknown words to unk.
type wordLevel struct {
	vocab  map[string]int
	vocabR map[int]string
	unkID  int
}

func newWordLevel(raw json.RawMessage) (*wordLevel, error) {
	v := struct {
		Vocab    map[string]int `json:"vocab"`
		UnkToken string         `json:"unk_token"`
	}{UnkToken: "<unk>"}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("WordLevel: %w", err)
	}
	unk, ok := v.Vocab[v.UnkToken]
	if !ok {
		return nil, fmt.Errorf("WordLevel: unk_token %q is not in the vocabulary", v.UnkToken)
	}
	return &wordLevel{vocab: v.Vocab, vocabR: invert(v.Vocab), unkID: unk}, nil
}

func (w *wordLevel) idToToken(id int) (string, bool) { t, ok := w.vocabR[id]; return t, ok }

func (w *wordLevel) tokenize(word string, _ *scratch, dst []int) []int {
	if word == "" {
		return dst
	}
	if id, ok := w.vocab[word]; ok {
		return append(dst, id)
	}
	return append(dst, w.unkID)
}

// unigram is SentencePiece's unigram model, decoded with Viterbi exactly as
// Rust's Unigram::encode_optimized: ties keep the shorter, earlier token,
// unknown characters cost min_score − 10 and adjacent unknowns fuse.
type unigram struct {
	tokens       []string
	scores       []float64
	ids          map[string]int
	unkID        int // -1 when absent
	byteFallback bool
	byteIDs      [256]int // byteFallbackIDs
	minScore     float64
	maxLen       int
}

const unigramUnkPenalty = 10.0

func newUnigram(raw json.RawMessage) (*unigram, error) {
	var v struct {
		Vocab        [][2]json.RawMessage `json:"vocab"`
		UnkID        *int                 `json:"unk_id"`
		ByteFallback bool                 `json:"byte_fallback"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("Unigram: %w", err)
	}
	u := &unigram{ids: make(map[string]int, len(v.Vocab)), unkID: -1, byteFallback: v.ByteFallback, minScore: math.Inf(1)}
	for i, pair := range v.Vocab {
		var tok string
		var score float64
		if err := json.Unmarshal(pair[0], &tok); err != nil {
			return nil, fmt.Errorf("Unigram: vocab[%d]: token: %w", i, err)
		}
		if err := json.Unmarshal(pair[1], &score); err != nil {
			return nil, fmt.Errorf("Unigram: vocab[%d]: score: %w", i, err)
		}
		u.tokens = append(u.tokens, tok)
		u.scores = append(u.scores, score)
		u.ids[tok] = i
		u.minScore = math.Min(u.minScore, score)
		u.maxLen = max(u.maxLen, len(tok))
	}
	u.byteIDs = byteFallbackIDs(u.ids)
	if v.UnkID != nil {
		if len(u.tokens) == 0 {
			return nil, fmt.Errorf("Unigram: the vocabulary is empty but unk_id is set")
		}
		if *v.UnkID < 0 || *v.UnkID >= len(u.tokens) {
			return nil, fmt.Errorf("Unigram: unk_id %d is outside the vocabulary", *v.UnkID)
		}
		u.unkID = *v.UnkID
	}
	return u, nil
}

func (u *unigram) idToToken(id int) (string, bool) {
	if id < 0 || id >= len(u.tokens) {
		return "", false
	}
	return u.tokens[id], true
}

func (u *unigram) tokenize(s string, _ *scratch, dst []int) []int {
	if s == "" {
		return dst
	}
	type node struct {
		id     int
		score  float64
		starts int // -1 when unreached
	}
	best := make([]node, len(s)+1)
	for i := range best {
		best[i].starts = -1
	}
	unkScore := u.minScore - unigramUnkPenalty
	for start := 0; start < len(s); {
		here := best[start].score
		_, mblen := utf8.DecodeRuneInString(s[start:])
		single := false
		for end := start + 1; end <= len(s) && end-start <= u.maxLen; end++ {
			if end < len(s) && !utf8.RuneStart(s[end]) {
				continue
			}
			id, ok := u.ids[s[start:end]]
			if !ok {
				continue
			}
			cand := u.scores[id] + here
			if t := &best[end]; t.starts < 0 || cand > t.score {
				t.score, t.starts, t.id = cand, start, id
			}
			if end-start == mblen {
				single = true
			}
		}
		if !single {
			cand := unkScore + here
			if t := &best[start+mblen]; t.starts < 0 || cand > t.score {
				t.score, t.starts, t.id = cand, start, u.unkID
			}
		}
		start += mblen
	}
	// Walk back, fusing consecutive unknowns (contiguous in s) into one
	// piece.
	var pieces []string
	unkEnd := -1 // where the run of unknowns being walked ends; -1: none
	for end := len(s); end > 0; {
		n := best[end]
		if n.id == u.unkID && u.unkID >= 0 {
			if unkEnd < 0 {
				unkEnd = end
			}
		} else {
			if unkEnd >= 0 {
				pieces = append(pieces, s[end:unkEnd])
				unkEnd = -1
			}
			pieces = append(pieces, s[n.starts:end])
		}
		end = n.starts
	}
	if unkEnd >= 0 {
		pieces = append(pieces, s[:unkEnd])
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		if id, ok := u.ids[p]; ok {
			dst = append(dst, id)
			continue
		}
		if u.byteFallback && u.hasByteIDs(p) {
			for i := 0; i < len(p); i++ {
				dst = append(dst, u.byteIDs[p[i]])
			}
			continue
		}
		if u.unkID >= 0 {
			dst = append(dst, u.unkID)
		}
	}
	return dst
}

// hasByteIDs reports whether every byte of p has a "<0xXX>" token.
func (u *unigram) hasByteIDs(p string) bool {
	for i := 0; i < len(p); i++ {
		if u.byteIDs[p[i]] < 0 {
			return false
		}
	}
	return true
}
