package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedMatcher finds added tokens leftmost-longest, as the aho-corasick
// automaton of Rust's AddedVocabulary does, then applies each token's
// single_word, lstrip and rstrip rules.
type addedMatcher struct {
	first [256]bool             // bytes some token starts with
	nodes map[uint64]int32      // (node<<8 | byte) -> child node
	term  map[int32]*AddedToken // node -> token ending there
}

func newAddedMatcher(tokens []*AddedToken) *addedMatcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &addedMatcher{nodes: map[uint64]int32{}, term: map[int32]*AddedToken{}}
	next := int32(1)
	for _, tok := range tokens {
		if tok.Content == "" {
			continue
		}
		m.first[tok.Content[0]] = true
		node := int32(0)
		for i := 0; i < len(tok.Content); i++ {
			key := uint64(node)<<8 | uint64(tok.Content[i])
			child, ok := m.nodes[key]
			if !ok {
				child = next
				next++
				m.nodes[key] = child
			}
			node = child
		}
		if _, dup := m.term[node]; !dup {
			m.term[node] = tok
		}
	}
	return m
}

// longestAt returns the longest token starting at s[i:], or nil.
func (m *addedMatcher) longestAt(s string, i int) (*AddedToken, int) {
	node := int32(0)
	var best *AddedToken
	end := 0
	for j := i; j < len(s); j++ {
		child, ok := m.nodes[uint64(node)<<8|uint64(s[j])]
		if !ok {
			break
		}
		node = child
		if t, ok := m.term[node]; ok {
			best, end = t, j+1
		}
	}
	return best, end
}

// split cuts p into pieces: added tokens (id set) and the text between.
func (m *addedMatcher) split(p piece, dst []piece) []piece {
	s := p.text
	if m == nil || s == "" {
		if s != "" {
			dst = append(dst, p)
		}
		return dst
	}
	emit := func(start, end int, id int) {
		if start >= end {
			return
		}
		dst = append(dst, piece{text: s[start:end], atOrigin: p.atOrigin && start == 0, id: id})
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		tok, stop := m.longestAt(s, i)
		if tok == nil {
			i++
			continue
		}
		start := i
		i = stop // the automaton resumes after the match whatever the rules decide
		if tok.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.LStrip {
			start = max(spaceLeftmostAtEnd(s[:start]), startOffset)
		}
		if tok.RStrip {
			stop += spaceRightmostAtStart(s[stop:])
		}
		if startOffset < start {
			emit(startOffset, start, -1)
		}
		// Rust keeps the token piece even where rstrip overlaps the next
		// match; slicing a negative span would panic there, so clamp.
		emit(min(start, stop), stop, tok.ID)
		startOffset = stop
	}
	if startOffset < len(s) {
		emit(startOffset, len(s), -1)
	}
	return dst
}

// startsWithWord and endsWithWord are Rust's `^\w` and `\w$` tests.
func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isRustWord(r)
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isRustWord(r)
}

// spaceLeftmostAtEnd is where the run of whitespace ending s begins.
func spaceLeftmostAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= n
	}
	return i
}

// spaceRightmostAtStart is the length of the whitespace run starting s.
func spaceRightmostAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}
