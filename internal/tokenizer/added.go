package tokenizer

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// addedMatcher finds added tokens leftmost-longest, as the aho-corasick
// automaton of Rust's AddedVocabulary does, then applies each token's
// single_word, lstrip and rstrip rules.
type addedMatcher struct {
	first [256]bool // bytes some token starts with
	// The trie: node n's children are edges[start[n]:start[n+1]], sorted
	// by byte; term[n] is the token ending at n. Slices, not maps: a
	// chat prompt walks a dozen special tokens byte by byte, and two map
	// lookups a byte were most of a special token's cost.
	start []int32
	edges []trieEdge
	term  []*AddedToken
}

type trieEdge struct {
	b             byte
	child, parent int32
}

func newAddedMatcher(tokens []*AddedToken) *addedMatcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &addedMatcher{term: []*AddedToken{nil}}
	nodes := map[uint64]int32{} // (node<<8 | byte) -> child, while building
	for _, tok := range tokens {
		if tok.Content == "" {
			continue
		}
		m.first[tok.Content[0]] = true
		node := int32(0)
		for i := 0; i < len(tok.Content); i++ {
			key := uint64(node)<<8 | uint64(tok.Content[i])
			child, ok := nodes[key]
			if !ok {
				child = int32(len(m.term))
				m.term = append(m.term, nil)
				nodes[key] = child
			}
			node = child
		}
		if m.term[node] == nil {
			m.term[node] = tok
		}
	}
	// Each node's edges, sorted by byte, stored together in node order.
	m.edges = make([]trieEdge, 0, len(nodes))
	for key, child := range nodes {
		m.edges = append(m.edges, trieEdge{b: byte(key), child: child, parent: int32(key >> 8)})
	}
	slices.SortFunc(m.edges, func(a, b trieEdge) int {
		if a.parent != b.parent {
			return int(a.parent - b.parent)
		}
		return int(a.b) - int(b.b)
	})
	m.start = make([]int32, len(m.term)+1)
	for _, e := range m.edges {
		m.start[e.parent+1]++
	}
	for n := 1; n < len(m.start); n++ {
		m.start[n] += m.start[n-1]
	}
	return m
}

// child is node's child on byte c.
func (m *addedMatcher) child(node int32, c byte) (int32, bool) {
	edges := m.edges[m.start[node]:m.start[node+1]]
	if len(edges) > 8 {
		k, found := slices.BinarySearchFunc(edges, c, func(e trieEdge, c byte) int { return int(e.b) - int(c) })
		if !found {
			return 0, false
		}
		return edges[k].child, true
	}
	for _, e := range edges {
		if e.b >= c {
			return e.child, e.b == c
		}
	}
	return 0, false
}

// longestAt returns the longest token starting at s[i:], or nil.
func (m *addedMatcher) longestAt(s string, i int) (*AddedToken, int) {
	node := int32(0)
	var best *AddedToken
	end := 0
	for j := i; j < len(s); j++ {
		child, ok := m.child(node, s[j])
		if !ok {
			break
		}
		node = child
		if t := m.term[node]; t != nil {
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
