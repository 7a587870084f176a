package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/tokenizer/regex"
	"github.com/islkit/islkit/internal/unicode16"
)

// piece is one split of the input on its way to the model: a stretch of
// (normalized) text, or an added token already resolved to its id.
type piece struct {
	text     string
	atOrigin bool // its first character comes from offset 0 of the input
	id       int  // the added token's id, or -1
}

// preTokenizer splits one piece into smaller ones, appending them to dst.
// Empty pieces are dropped by the caller, as Rust's PreTokenizedString does.
type preTokenizer interface {
	split(p piece, sc *scratch, dst []piece) []piece
}

// behavior is Split's SplitDelimiterBehavior.
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("unknown split behavior %q", s)
}

func buildPreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	kind, err := typeOf(raw)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "Sequence":
		var v struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Sequence: %w", err)
		}
		var seq sequencePreTokenizer
		for i, r := range v.PreTokenizers {
			p, err := buildPreTokenizer(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			// A nested sequence is flattened: each step runs over every
			// piece either way, and one level lets sequence reuse buffers.
			if inner, ok := p.(sequencePreTokenizer); ok {
				seq = append(seq, inner...)
			} else if p != nil {
				seq = append(seq, p)
			}
		}
		return seq, nil
	case "Split":
		var v struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		p, err := buildPattern(v.Pattern)
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		b, err := parseBehavior(v.Behavior)
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		return &splitPreTokenizer{pattern: p, behavior: b, invert: v.Invert}, nil
	case "ByteLevel":
		v := struct {
			AddPrefixSpace bool `json:"add_prefix_space"`
			UseRegex       bool `json:"use_regex"`
		}{AddPrefixSpace: true, UseRegex: true}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("ByteLevel: %w", err)
		}
		bl := &byteLevelPreTokenizer{addPrefixSpace: v.AddPrefixSpace, mapBytes: true}
		if v.UseRegex {
			m, err := regex.Compile(regex.PatternGPT2)
			if err != nil {
				return nil, fmt.Errorf("ByteLevel: %w", err)
			}
			bl.regex = regexPattern{m}
		}
		return bl, nil
	case "Metaspace":
		var v struct {
			Replacement    string `json:"replacement"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			PrependScheme  string `json:"prepend_scheme"`
			Split          *bool  `json:"split"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Metaspace: %w", err)
		}
		return newMetaspace(v.Replacement, v.AddPrefixSpace, v.PrependScheme, v.Split)
	case "Whitespace":
		return whitespacePreTokenizer{}, nil
	case "WhitespaceSplit":
		return funcSplit{match: unicode.IsSpace, behavior: removed}, nil
	case "BertPreTokenizer":
		return sequencePreTokenizer{
			funcSplit{match: unicode.IsSpace, behavior: removed},
			funcSplit{match: isPunctuation, behavior: isolated},
		}, nil
	case "Digits":
		var v struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Digits: %w", err)
		}
		b := contiguous
		if v.IndividualDigits {
			b = isolated
		}
		return funcSplit{match: isNumeric, behavior: b}, nil
	case "Punctuation":
		v := struct {
			Behavior string `json:"behavior"`
		}{Behavior: "Isolated"}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Punctuation: %w", err)
		}
		b, err := parseBehavior(v.Behavior)
		if err != nil {
			return nil, fmt.Errorf("Punctuation: %w", err)
		}
		return funcSplit{match: isPunctuation, behavior: b}, nil
	case "CharDelimiterSplit":
		var v struct {
			Delimiter string `json:"delimiter"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("CharDelimiterSplit: %w", err)
		}
		d, n := utf8.DecodeRuneInString(v.Delimiter)
		if n == 0 || n != len(v.Delimiter) {
			return nil, fmt.Errorf("CharDelimiterSplit: delimiter %q is not one character", v.Delimiter)
		}
		return funcSplit{match: func(r rune) bool { return r == d }, behavior: removed}, nil
	default:
		return nil, fmt.Errorf("unsupported pre_tokenizer type %q", kind)
	}
}

type sequencePreTokenizer []preTokenizer

func (seq sequencePreTokenizer) split(p piece, sc *scratch, dst []piece) []piece {
	// Each step runs over every piece the previous step produced. Two
	// scratch buffers alternate so that only the final result lands in dst.
	cur := append(sc.seqA[:0], p)
	next := sc.seqB[:0]
	for _, step := range seq {
		next = next[:0]
		for _, q := range cur {
			next = step.split(q, sc, next)
		}
		cur, next = next, cur
	}
	dst = append(dst, cur...)
	sc.seqA, sc.seqB = cur[:0], next[:0]
	return dst
}

// seg is one span of splitByMatches's alternating match/non-match list.
type seg struct {
	start, end int
	match      bool
}

// splitByMatches turns match spans into pieces according to behavior. The
// spans are the pattern's matches; in between lie non-matches. It follows
// NormalizedString::split, including its quirks.
func splitByMatches(p piece, matches [][2]int, invert bool, b behavior, sc *scratch, dst []piece) []piece {
	s := p.text
	if s == "" {
		return dst
	}
	// Build the alternating (offsets, isMatch) list.
	segs := sc.segs[:0]
	defer func() { sc.segs = segs[:0] }()
	prev := 0
	for _, m := range matches {
		if prev != m[0] {
			segs = append(segs, seg{prev, m[0], invert})
		}
		segs = append(segs, seg{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev != len(s) {
		segs = append(segs, seg{prev, len(s), invert})
	}
	emit := func(start, end int) {
		if start == end {
			return
		}
		dst = append(dst, piece{text: s[start:end], atOrigin: p.atOrigin && start == 0, id: -1})
	}
	switch b {
	case isolated:
		for _, g := range segs {
			emit(g.start, g.end)
		}
	case removed:
		for _, g := range segs {
			if !g.match {
				emit(g.start, g.end)
			}
		}
	case contiguous, mergedWithPrevious:
		// contiguous joins runs of the same kind; mergedWithPrevious joins
		// each match to the non-match before it.
		cur := segs[0]
		for i := 1; i < len(segs); i++ {
			g := segs[i]
			join := g.match == segs[i-1].match
			if b == mergedWithPrevious {
				join = g.match && !segs[i-1].match
			}
			if join {
				cur.end = g.end
				continue
			}
			emit(cur.start, cur.end)
			cur = g
		}
		emit(cur.start, cur.end)
	case mergedWithNext:
		// Each match joins the non-match after it.
		for i := 0; i < len(segs); i++ {
			g := segs[i]
			if g.match && i+1 < len(segs) && !segs[i+1].match {
				i++
				g.end = segs[i].end
			}
			emit(g.start, g.end)
		}
	}
	return dst
}

type splitPreTokenizer struct {
	pattern  pattern
	behavior behavior
	invert   bool
}

func (sp *splitPreTokenizer) split(p piece, sc *scratch, dst []piece) []piece {
	sc.spans = sp.pattern.matches(p.text, sc.spans[:0])
	return splitByMatches(p, sc.spans, sp.invert, sp.behavior, sc, dst)
}

// funcSplit splits on every character for which match is true, like Rust's
// `impl Pattern for Fn(char) -> bool`.
type funcSplit struct {
	match    func(rune) bool
	behavior behavior
}

func (fs funcSplit) split(p piece, sc *scratch, dst []piece) []piece {
	spans := sc.spans[:0]
	for i, r := range p.text {
		if fs.match(r) {
			spans = append(spans, [2]int{i, i + utf8.RuneLen(r)})
		}
	}
	sc.spans = spans
	return splitByMatches(p, spans, false, fs.behavior, sc, dst)
}

// isNumeric is Rust's char::is_numeric: general categories Nd, Nl and No.
func isNumeric(r rune) bool {
	return unicode.In(r, unicode.Nd, unicode.Nl, unicode.No)
}

// isPunctuation is the Bert/Punctuation test: ASCII punctuation (which
// includes symbols such as $ + < = > ^ ` | ~) or Unicode category P.
func isPunctuation(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}

// whitespacePreTokenizer keeps the matches of `\w+|[^\w\s]+`, run by the
// Rust regex crate (not Oniguruma: its \w includes the zero-width joiners).
type whitespacePreTokenizer struct{}

var whitespaceMatcher = regex.Whitespace()

func (whitespacePreTokenizer) split(p piece, sc *scratch, dst []piece) []piece {
	sc.spans = whitespaceMatcher.FindAll(p.text, sc.spans[:0])
	return splitByMatches(p, sc.spans, true, removed, sc, dst)
}

// isRustWord is the Rust regex crate's \w, used by single_word added tokens.
func isRustWord(r rune) bool { return unicode16.Is(unicode16.RegexWord, r) }

type metaspace struct {
	replacement string
	scheme      string // "always", "first" or "never"
	splitOn     bool
}

func newMetaspace(replacement string, addPrefixSpace *bool, scheme string, split *bool) (*metaspace, error) {
	if utf8.RuneCountInString(replacement) != 1 {
		return nil, fmt.Errorf("Metaspace: replacement %q is not one character", replacement)
	}
	if scheme == "" {
		scheme = "always"
	}
	switch scheme {
	case "always", "first", "never":
	default:
		return nil, fmt.Errorf("Metaspace: unknown prepend_scheme %q", scheme)
	}
	if addPrefixSpace != nil && !*addPrefixSpace {
		if scheme != "never" && scheme != "always" {
			return nil, fmt.Errorf("Metaspace: add_prefix_space does not match declared prepend_scheme")
		}
		scheme = "never"
	}
	m := &metaspace{replacement: replacement, scheme: scheme, splitOn: true}
	if split != nil {
		m.splitOn = *split
	}
	return m, nil
}

func (m *metaspace) transform(p piece) piece {
	s := strings.ReplaceAll(p.text, " ", m.replacement)
	switch m.scheme {
	case "always":
		if !strings.HasPrefix(s, m.replacement) {
			s = m.replacement + s
		}
	case "first":
		if !strings.HasPrefix(s, m.replacement) && p.atOrigin {
			s = m.replacement + s
		}
	}
	return piece{text: s, atOrigin: p.atOrigin, id: -1}
}

func (m *metaspace) split(p piece, sc *scratch, dst []piece) []piece {
	p = m.transform(p)
	if !m.splitOn {
		return append(dst, p)
	}
	sc.spans = literalPattern(m.replacement).matches(p.text, sc.spans[:0])
	return splitByMatches(p, sc.spans, false, mergedWithNext, sc, dst)
}

// byteLevelPreTokenizer optionally adds a prefix space, optionally splits
// with the GPT-2 regex, then maps every byte to its printable character.
// When the BPE model works on raw bytes, mapBytes is turned off and the
// model does the mapping's job through a byte-keyed vocabulary.
type byteLevelPreTokenizer struct {
	addPrefixSpace bool
	regex          pattern
	mapBytes       bool
}

func (bl *byteLevelPreTokenizer) split(p piece, sc *scratch, dst []piece) []piece {
	if bl.addPrefixSpace && !strings.HasPrefix(p.text, " ") {
		p.text = " " + p.text
	}
	start := len(dst)
	if bl.regex != nil {
		sc.spans = bl.regex.matches(p.text, sc.spans[:0])
		dst = splitByMatches(p, sc.spans, false, isolated, sc, dst)
	} else if p.text != "" {
		dst = append(dst, p)
	}
	if bl.mapBytes {
		for i := start; i < len(dst); i++ {
			dst[i].text = byteLevelMap(dst[i].text)
		}
	}
	return dst
}
