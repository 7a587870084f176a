package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"golang.org/x/text/unicode/norm"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// normalizer rewrites one segment of text. atOrigin reports whether the
// segment's first character still comes from offset 0 of the original input;
// only Metaspace's prepend_scheme "first" reads it, so normalizers that drop
// leading characters must clear it, as Rust's alignments would.
type normalizer interface {
	normalize(s string, atOrigin bool) (string, bool)
}

func buildNormalizer(raw json.RawMessage) (normalizer, error) {
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
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Sequence: %w", err)
		}
		var seq sequenceNormalizer
		for i, r := range v.Normalizers {
			n, err := buildNormalizer(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		if len(seq) == 0 {
			return nil, nil
		}
		return seq, nil
	case "NFC":
		return unicodeNormalizer{form: norm.NFC}, nil
	case "NFD":
		return unicodeNormalizer{form: norm.NFD}, nil
	case "NFKC":
		return unicodeNormalizer{form: norm.NFKC}, nil
	case "NFKD":
		return unicodeNormalizer{form: norm.NFKD}, nil
	case "Lowercase":
		return lowercaseNormalizer{}, nil
	case "Prepend":
		var v struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Prepend: %w", err)
		}
		return prependNormalizer(v.Prepend), nil
	case "Replace":
		var v struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Replace: %w", err)
		}
		p, err := buildPattern(v.Pattern)
		if err != nil {
			return nil, fmt.Errorf("Replace: %w", err)
		}
		return replaceNormalizer{pattern: p, content: v.Content}, nil
	case "Strip":
		var v struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Strip: %w", err)
		}
		return stripNormalizer{left: v.Left, right: v.Right}, nil
	case "StripAccents":
		return stripAccentsNormalizer{}, nil
	case "BertNormalizer":
		v := struct {
			CleanText          bool  `json:"clean_text"`
			HandleChineseChars bool  `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          bool  `json:"lowercase"`
		}{CleanText: true, HandleChineseChars: true, Lowercase: true}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("BertNormalizer: %w", err)
		}
		strip := v.Lowercase
		if v.StripAccents != nil {
			strip = *v.StripAccents
		}
		return bertNormalizer{clean: v.CleanText, chinese: v.HandleChineseChars, stripAccents: strip, lowercase: v.Lowercase}, nil
	case "ByteLevel":
		return byteLevelNormalizer{}, nil
	default:
		return nil, fmt.Errorf("unsupported normalizer type %q", kind)
	}
}

type sequenceNormalizer []normalizer

func (seq sequenceNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	for _, n := range seq {
		s, atOrigin = n.normalize(s, atOrigin)
	}
	return s, atOrigin
}

// unicodeNormalizer applies NFC/NFD/NFKC/NFKD. Rust tokenizers' tables are
// older than Go's Unicode 15.0 ones; what Unicode added since (a composition
// and some compatibility mappings, see rustUnmapped) is undone so that the
// output matches theirs. A probe of every code point found no other
// difference.
type unicodeNormalizer struct{ form norm.Form }

// diveAkuruPair composes to U+11938 in Go but not in Rust's tables.
const diveAkuruPair = "\U00011935\U00011930"

func (u unicodeNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	if isASCII(s) || u.form.IsNormalString(s) {
		return s, atOrigin
	}
	if (u.form == norm.NFC || u.form == norm.NFKC) && strings.Contains(s, diveAkuruPair) {
		parts := strings.Split(s, diveAkuruPair)
		for i := range parts {
			parts[i] = u.apply(parts[i])
		}
		return strings.Join(parts, diveAkuruPair), atOrigin
	}
	return u.apply(s), atOrigin
}

// apply normalises s, keeping each rune Rust leaves unmapped verbatim by
// cutting the string there and normalising the pieces in between.
func (u unicodeNormalizer) apply(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return rustUnmapped[r] }) {
		return u.form.String(s)
	}
	var b strings.Builder
	start := 0
	for i, r := range s {
		if rustUnmapped[r] {
			b.WriteString(u.form.String(s[start:i]))
			b.WriteRune(r)
			start = i + utf8.RuneLen(r)
		}
	}
	b.WriteString(u.form.String(s[start:]))
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowercaseNormalizer lowercases rune by rune like Rust's char::to_lowercase:
// full mappings, so U+0130 becomes "i̇", and no context (no final sigma).
type lowercaseNormalizer struct{}

func (lowercaseNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String(), atOrigin
}

type prependNormalizer string

func (p prependNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	if s == "" {
		return s, atOrigin
	}
	return string(p) + s, atOrigin
}

type replaceNormalizer struct {
	pattern pattern
	content string
}

func (r replaceNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	if lit, ok := r.pattern.(literalPattern); ok {
		// Leftmost non-overlapping matches, as literalPattern finds them,
		// in one allocation (SentencePiece models replace every " ").
		if lit == "" || !strings.Contains(s, string(lit)) {
			return s, atOrigin
		}
		if r.content == "" && strings.HasPrefix(s, string(lit)) {
			atOrigin = false
		}
		return strings.ReplaceAll(s, string(lit), r.content), atOrigin
	}
	spans := r.pattern.matches(s, nil)
	if len(spans) == 0 {
		return s, atOrigin
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range spans {
		b.WriteString(s[last:m[0]])
		b.WriteString(r.content)
		last = m[1]
	}
	b.WriteString(s[last:])
	if spans[0][0] == 0 && spans[0][1] > 0 && r.content == "" {
		atOrigin = false
	}
	return b.String(), atOrigin
}

type stripNormalizer struct{ left, right bool }

func (st stripNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	if st.left {
		t := strings.TrimLeftFunc(s, unicode.IsSpace)
		if len(t) != len(s) {
			atOrigin = false
		}
		s = t
	}
	if st.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s, atOrigin
}

type stripAccentsNormalizer struct{}

func (stripAccentsNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	return filterRunes(s, atOrigin, func(r rune) bool { return !unicode.Is(unicode.M, r) })
}

// filterRunes keeps the runes for which keep is true.
func filterRunes(s string, atOrigin bool, keep func(rune) bool) (string, bool) {
	var b strings.Builder
	first := true
	for _, r := range s {
		if keep(r) {
			b.WriteRune(r)
		} else if first {
			atOrigin = false
		}
		first = false
	}
	return b.String(), atOrigin
}

type bertNormalizer struct{ clean, chinese, stripAccents, lowercase bool }

func (bn bertNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	if bn.clean {
		s, atOrigin = filterRunes(s, atOrigin, func(r rune) bool {
			return !(r == 0 || r == 0xfffd || isBertControl(r))
		})
		s = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return ' '
			}
			return r
		}, s)
	}
	if bn.chinese {
		var b strings.Builder
		for _, r := range s {
			if isChineseChar(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if bn.stripAccents {
		s = norm.NFD.String(s)
		s, atOrigin = filterRunes(s, atOrigin, func(r rune) bool { return !unicode.Is(unicode.Mn, r) })
	}
	if bn.lowercase {
		s, atOrigin = lowercaseNormalizer{}.normalize(s, atOrigin)
	}
	return s, atOrigin
}

// isBertControl is Rust's is_control for clean_text: other than tab, LF
// and CR, the control, format and private-use characters. Unassigned code
// points are kept (checked against the Rust library: U+0378, U+FFFF and
// U+E0080 stay; U+00AD, U+0600 and U+E000 go).
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

func isChineseChar(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF, r >= 0x2A700 && r <= 0x2B73F,
		r >= 0x2B740 && r <= 0x2B81F, r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// byteLevelNormalizer maps every byte to its GPT-2 printable character.
type byteLevelNormalizer struct{}

func (byteLevelNormalizer) normalize(s string, atOrigin bool) (string, bool) {
	return byteLevelMap(s), atOrigin
}

// pattern is a Split or Replace pattern: a literal string or an exact regex.
type pattern interface {
	// matches appends the [start,end) byte spans of successive matches.
	matches(s string, dst [][2]int) [][2]int
}

func buildPattern(p patternJSON) (pattern, error) {
	switch {
	case p.String != nil && p.Regex == nil:
		return literalPattern(*p.String), nil
	case p.Regex != nil && p.String == nil:
		m, err := regex.Compile(*p.Regex)
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", *p.Regex, err)
		}
		return regexPattern{m}, nil
	default:
		return nil, fmt.Errorf(`pattern must have exactly one of "String" or "Regex"`)
	}
}

type literalPattern string

func (l literalPattern) matches(s string, dst [][2]int) [][2]int {
	if l == "" {
		return dst
	}
	off := 0
	for {
		i := strings.Index(s[off:], string(l))
		if i < 0 {
			return dst
		}
		dst = append(dst, [2]int{off + i, off + i + len(l)})
		off += i + len(l)
	}
}

type regexPattern struct{ m regex.Matcher }

func (r regexPattern) matches(s string, dst [][2]int) [][2]int {
	return r.m.FindAll(s, dst)
}
