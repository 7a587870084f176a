package regex

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	u "github.com/islkit/islkit/internal/unicode16"
)

// fallback runs a rewritten pattern on regexp2 (backtracking, .NET syntax and semantics, which
// agree with Oniguruma's on the subset the rewrite lets through).
type fallback struct {
	re      *regexp2.Regexp
	pattern string
}

// MatchTimeout bounds one regexp2 match call. Patterns come from
// tokenizer.json files anyone can publish, and a backtracking pattern can
// take exponential time; real patterns match one pre-token in microseconds.
// Read when a pattern is compiled.
var MatchTimeout = 10 * time.Second

// TimeoutError is what FindAll panics with when a match runs past
// MatchTimeout. Matcher has no error return (a regex that compiled always
// matches), so it is a panic, which a caller that must go on (measure, per
// line) recovers; otherwise the run ends with this message instead of
// hanging.
type TimeoutError struct {
	Pattern string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("tokenizer regex %q: a match ran longer than %v (the pattern backtracks catastrophically on this text)", e.Pattern, e.Timeout)
}

// CompileFallback compiles pattern for regexp2 whatever it is, without looking for a scanner; it
// is the path for unknown patterns and the cross-check of the scanners. It refuses constructs whose
// Oniguruma meaning it cannot reproduce exactly.
func CompileFallback(pattern string) (Matcher, error) {
	rewritten, err := rewrite(pattern)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", pattern, err)
	}
	re, err := regexp2.Compile(rewritten, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", pattern, err)
	}
	re.MatchTimeout = MatchTimeout
	return &fallback{re: re, pattern: pattern}, nil
}

// FindAll iterates as the onig crate's find_iter does: each search starts where the previous match
// ended, and an empty match right at the end of the previous match is dropped by moving the start
// on one character and searching again.
func (f *fallback) FindAll(s string, dst [][2]int) [][2]int {
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1) // byte offset of each rune index
	for i, r := range s {
		runes = append(runes, r)
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	start, lastEnd := 0, -1
	for start <= len(runes) {
		m, err := f.re.FindRunesMatchStartingAt(runes, start)
		if err != nil {
			// The only error regexp2 returns is the timeout.
			panic(&TimeoutError{Pattern: f.pattern, Timeout: f.re.MatchTimeout})
		}
		if m == nil {
			break
		}
		b, e := m.Index, m.Index+m.Length
		if b == e && e == lastEnd {
			start++
			continue
		}
		dst = append(dst, [2]int{offs[b], offs[e]})
		start, lastEnd = e, e
	}
	return dst
}

// classNames maps the \p{..} names that have probed Unicode 16 sets to them.
var classNames = map[string]u.Class{
	"L": u.L, "N": u.N, "Lu": u.Lu, "Ll": u.Ll, "Lt": u.Lt, "Lm": u.Lm, "Lo": u.Lo,
	"M": u.M, "P": u.P, "S": u.S,
}

// rewrite turns an Oniguruma pattern into an equivalent regexp2 pattern, or says why it cannot.
func rewrite(pat string) (string, error) {
	var b strings.Builder
	rw := rewriter{pat: pat, b: &b}
	if err := rw.run(); err != nil {
		return "", err
	}
	return b.String(), nil
}

type rewriter struct {
	pat string
	i   int
	b   *strings.Builder
	// foldDepth > 0 while inside a (?i:...) group (a bare (?i) is refused
	// below for simplicity).
	foldDepth int
	// groups records, per open parenthesis, whether it opened a case-folding group.
	groups []bool
	// prevLetter is the last ASCII letter written inside a folding group with nothing in between,
	// to spot pairs that Oniguruma would also match as one multi-character fold (ss = ß, st, ff...).
	prevLetter byte
}

func (rw *rewriter) run() error {
	for rw.i < len(rw.pat) {
		c := rw.pat[rw.i]
		letter := byte(0)
		switch {
		case c == '\\':
			if err := rw.escape(false); err != nil {
				return err
			}
		case c == '[':
			if rw.foldDepth > 0 {
				return fmt.Errorf("character class inside (?i) at offset %d: case folding of classes is not reproduced", rw.i)
			}
			if err := rw.class(); err != nil {
				return err
			}
		case c == '(':
			if err := rw.open(); err != nil {
				return err
			}
		case c == ')':
			if len(rw.groups) == 0 {
				return fmt.Errorf("unbalanced ')' at offset %d", rw.i)
			}
			if rw.groups[len(rw.groups)-1] {
				rw.foldDepth--
			}
			rw.groups = rw.groups[:len(rw.groups)-1]
			rw.b.WriteByte(')')
			rw.i++
		case c == '^' || c == '$':
			return fmt.Errorf("anchor %q at offset %d: Oniguruma's (Ruby) line anchors are not reproduced", c, rw.i)
		case c == '*' || c == '+' || c == '?' || c == '{':
			if rw.foldDepth > 0 {
				return fmt.Errorf("quantifier inside (?i) at offset %d is not supported", rw.i)
			}
			if err := rw.quantifier(); err != nil {
				return err
			}
		case c == '|' || c == '.':
			rw.b.WriteByte(c)
			rw.i++
		case c >= utf8.RuneSelf:
			if rw.foldDepth > 0 {
				return fmt.Errorf("non-ASCII literal inside (?i) at offset %d: its case folding is not reproduced", rw.i)
			}
			r, n := utf8.DecodeRuneInString(rw.pat[rw.i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Errorf("invalid UTF-8 at offset %d", rw.i)
			}
			rw.literal(r)
			rw.i += n
		default:
			if rw.foldDepth > 0 && asciiLetter(c) {
				lc := c | 0x20
				if p := rw.prevLetter; p != 0 && (p == 's' && (lc == 's' || lc == 't') || p == 'f' && (lc == 'f' || lc == 'i' || lc == 'l')) {
					return fmt.Errorf("%q inside (?i) at offset %d: Oniguruma also matches it as a one-character fold (e.g. ß, ﬆ, ﬁ)", string([]byte{p, lc}), rw.i-1)
				}
				letter = lc
				rw.foldedLetter(lc)
			} else {
				rw.literal(rune(c))
			}
			rw.i++
		}
		rw.prevLetter = letter
	}
	if len(rw.groups) != 0 {
		return fmt.Errorf("unbalanced '('")
	}
	return nil
}

// foldedLetter writes the set of characters Oniguruma's case folding equates with an ASCII
// letter: its two cases, plus U+017F for s and U+212A (Kelvin sign) for k (probed for every
// code point against the Rust library).
func (rw *rewriter) foldedLetter(lc byte) {
	rw.b.WriteByte('[')
	rw.b.WriteByte(lc)
	rw.b.WriteByte(lc - 0x20)
	switch lc {
	case 's':
		rw.b.WriteString(`\u017F`)
	case 'k':
		rw.b.WriteString(`\u212A`)
	}
	rw.b.WriteByte(']')
}

// literal writes r so that regexp2 reads it as itself.
func (rw *rewriter) literal(r rune) {
	switch {
	case r < 0x80 && strings.ContainsRune(`\*+?|{}[]()^$.#- `, r):
		rw.b.WriteByte('\\')
		rw.b.WriteRune(r)
	case r < 0x20 || r == 0x7F:
		fmt.Fprintf(rw.b, `\u%04X`, r)
	default:
		rw.b.WriteRune(r)
	}
}

func (rw *rewriter) open() error {
	rest := rw.pat[rw.i:]
	for _, p := range []string{"(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"} {
		if strings.HasPrefix(rest, p) {
			rw.groups = append(rw.groups, false)
			rw.b.WriteString(p)
			rw.i += len(p)
			return nil
		}
	}
	if strings.HasPrefix(rest, "(?i:") {
		rw.groups = append(rw.groups, true)
		rw.foldDepth++
		rw.b.WriteString("(?:")
		rw.i += len("(?i:")
		return nil
	}
	if strings.HasPrefix(rest, "(?") {
		return fmt.Errorf("group syntax %.6q at offset %d is not supported (inline options other than (?i:...), named groups, comments)", rest, rw.i)
	}
	rw.groups = append(rw.groups, false)
	rw.b.WriteByte('(')
	rw.i++
	return nil
}

// quantifier copies one quantifier; possessive forms (a*+) and Oniguruma's {,n} are refused
// because regexp2 reads them differently.
func (rw *rewriter) quantifier() error {
	c := rw.pat[rw.i]
	if c == '{' {
		j := strings.IndexByte(rw.pat[rw.i:], '}')
		body := ""
		if j > 0 {
			body = rw.pat[rw.i+1 : rw.i+j]
		}
		lo, hi, comma := strings.Cut(body, ",")
		if !validCount(lo, false) || (comma && !validCount(hi, true)) {
			return fmt.Errorf("brace %q at offset %d is not a {n}, {n,} or {n,m} interval", rw.pat[rw.i:min(len(rw.pat), rw.i+8)], rw.i)
		}
		rw.b.WriteString(rw.pat[rw.i : rw.i+j+1])
		rw.i += j + 1
	} else {
		rw.b.WriteByte(c)
		rw.i++
	}
	if rw.i < len(rw.pat) {
		switch rw.pat[rw.i] {
		case '?':
			rw.b.WriteByte('?')
			rw.i++
		case '+':
			return fmt.Errorf("possessive quantifier at offset %d is not supported", rw.i)
		}
	}
	if rw.i < len(rw.pat) && strings.ContainsRune("*+?{", rune(rw.pat[rw.i])) {
		return fmt.Errorf("stacked quantifier at offset %d is not supported", rw.i)
	}
	return nil
}

func validCount(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}

// escape rewrites one backslash escape at rw.i; inClass selects the form valid inside [...].
func (rw *rewriter) escape(inClass bool) error {
	if rw.i+1 >= len(rw.pat) {
		return fmt.Errorf("trailing backslash")
	}
	c := rw.pat[rw.i+1]
	at := rw.i
	rw.i += 2
	if rw.foldDepth > 0 && (asciiLetter(c) || c >= utf8.RuneSelf) {
		return fmt.Errorf(`escape \%c inside (?i) at offset %d is not supported`, c, at)
	}
	switch c {
	case 'p', 'P':
		if rw.i >= len(rw.pat) || rw.pat[rw.i] != '{' {
			return fmt.Errorf(`\%c without {name} at offset %d`, c, at)
		}
		j := strings.IndexByte(rw.pat[rw.i:], '}')
		if j < 0 {
			return fmt.Errorf(`unterminated \%c{ at offset %d`, c, at)
		}
		name := rw.pat[rw.i+1 : rw.i+j]
		rw.i += j + 1
		neg := c == 'P'
		if strings.HasPrefix(name, "^") {
			name, neg = name[1:], !neg
		}
		cl, ok := classNames[name]
		if !ok {
			return fmt.Errorf(`\%c{%s} at offset %d: no probed Unicode 16 set for it`, c, name, at)
		}
		rw.set(u.Ranges(cl), neg, inClass)
	case 's', 'S':
		rw.set(u.Ranges(u.Space), c == 'S', inClass)
	case 'w', 'W':
		if !inClass {
			rw.set(u.Ranges(u.Word), c == 'W', false)
			break
		}
		// Inside a bracket class Oniguruma's \w lacks ² ³ ¹ ¼ ½ ¾, which the bare \w holds
		// (probed); \W there was not probed, so it is refused.
		if c == 'W' {
			return fmt.Errorf(`\W inside a class at offset %d is not supported`, at)
		}
		rw.set(classWord(), false, true)
	case 'r', 'n', 't', 'f', 'v', 'a', 'e':
		rw.b.WriteByte('\\')
		rw.b.WriteByte(c)
	case 'u':
		if rw.i+4 > len(rw.pat) {
			return fmt.Errorf(`short \u escape at offset %d`, at)
		}
		v, err := strconv.ParseUint(rw.pat[rw.i:rw.i+4], 16, 32)
		if err != nil {
			return fmt.Errorf(`bad \u escape at offset %d`, at)
		}
		rw.i += 4
		fmt.Fprintf(rw.b, `\u%04X`, v)
	case 'x':
		var hex string
		if rw.i < len(rw.pat) && rw.pat[rw.i] == '{' {
			j := strings.IndexByte(rw.pat[rw.i:], '}')
			if j < 0 {
				return fmt.Errorf(`unterminated \x{ at offset %d`, at)
			}
			hex = rw.pat[rw.i+1 : rw.i+j]
			rw.i += j + 1
		} else if rw.i+2 <= len(rw.pat) {
			hex = rw.pat[rw.i : rw.i+2]
			rw.i += 2
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) {
			return fmt.Errorf(`bad \x escape at offset %d`, at)
		}
		rw.literal(rune(v))
	case 'A', 'z':
		if inClass {
			return fmt.Errorf(`\%c inside a class at offset %d`, c, at)
		}
		rw.b.WriteByte('\\')
		rw.b.WriteByte(c)
	default:
		if c < utf8.RuneSelf && !asciiLetter(c) && !(c >= '0' && c <= '9') {
			rw.literal(rune(c)) // an escaped punctuation character stands for itself
			return nil
		}
		return fmt.Errorf(`escape \%c at offset %d is not supported (its Oniguruma meaning is not reproduced)`, c, at)
	}
	return nil
}

// classWord returns the ranges of \w as Oniguruma reads it inside a bracket class.
func classWord() [][2]rune {
	var out [][2]rune
	for _, r := range u.Ranges(u.Word) {
		for x := r[0]; x <= r[1]; x++ {
			if latin1NotClassWord(x) {
				if x > r[0] {
					out = append(out, [2]rune{r[0], x - 1})
				}
				r[0] = x + 1
			}
		}
		if r[0] <= r[1] {
			out = append(out, r)
		}
	}
	return out
}

// set writes the ranges (complemented when neg) as a class, or as class items when inClass.
func (rw *rewriter) set(rs [][2]rune, neg, inClass bool) {
	if neg {
		rs = complement(rs)
	}
	if !inClass {
		rw.b.WriteByte('[')
	}
	for _, r := range rs {
		writeClassRune(rw.b, r[0])
		if r[1] != r[0] {
			rw.b.WriteByte('-')
			writeClassRune(rw.b, r[1])
		}
	}
	if !inClass {
		rw.b.WriteByte(']')
	}
}

func writeClassRune(b *strings.Builder, r rune) {
	if r <= 0xFFFF {
		fmt.Fprintf(b, `\u%04X`, r)
	} else {
		b.WriteRune(r) // regexp2 reads patterns as runes, and no supplementary rune is special
	}
}

// complement returns the ranges of 0..0x10FFFF not in rs (sorted, disjoint).
func complement(rs [][2]rune) [][2]rune {
	var out [][2]rune
	next := rune(0)
	for _, r := range rs {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= 0x10FFFF {
		out = append(out, [2]rune{next, 0x10FFFF})
	}
	return out
}

// class rewrites a bracket expression. Oniguruma's nested classes and && intersections are
// refused; the rest maps item by item.
func (rw *rewriter) class() error {
	start := rw.i
	rw.b.WriteByte('[')
	rw.i++
	if rw.i < len(rw.pat) && rw.pat[rw.i] == '^' {
		rw.b.WriteByte('^')
		rw.i++
	}
	first, prevSet := true, false
	for {
		if rw.i >= len(rw.pat) {
			return fmt.Errorf("unterminated class at offset %d", start)
		}
		c := rw.pat[rw.i]
		switch {
		case c == ']' && !first:
			rw.b.WriteByte(']')
			rw.i++
			return nil
		case c == ']':
			return fmt.Errorf("empty class or leading ']' at offset %d is not supported", rw.i)
		case c == '[':
			return fmt.Errorf("nested class or POSIX bracket at offset %d is not supported", rw.i)
		case c == '&' && strings.HasPrefix(rw.pat[rw.i:], "&&"):
			return fmt.Errorf("class intersection && at offset %d is not supported", rw.i)
		case c == '\\':
			if rw.i+1 < len(rw.pat) && rw.pat[rw.i+1] == 'b' {
				return fmt.Errorf(`\b inside a class at offset %d is not supported`, rw.i)
			}
			isSet := rw.i+1 < len(rw.pat) && strings.IndexByte("pPsSwW", rw.pat[rw.i+1]) >= 0
			if err := rw.escape(true); err != nil {
				return err
			}
			first, prevSet = false, isSet
			continue
		case c == '-' && !first && !strings.HasPrefix(rw.pat[rw.i:], "-]") &&
			(prevSet || strings.HasPrefix(rw.pat[rw.i+1:], `\p`) || strings.HasPrefix(rw.pat[rw.i+1:], `\P`) ||
				strings.HasPrefix(rw.pat[rw.i+1:], `\s`) || strings.HasPrefix(rw.pat[rw.i+1:], `\S`) ||
				strings.HasPrefix(rw.pat[rw.i+1:], `\w`)):
			return fmt.Errorf("range with a class escape as an endpoint at offset %d is not supported", rw.i)
		case c == '-':
			// A range dash between two items, or a literal at the edges; regexp2 reads both the
			// same way as Oniguruma when the endpoints are single characters, which the escapes
			// above always produce (sets expand to whole ranges, never to a range endpoint).
			if strings.HasPrefix(rw.pat[rw.i:], "-]") || first {
				rw.b.WriteString(`\-`)
			} else {
				rw.b.WriteByte('-')
			}
			rw.i++
		default:
			r, n := utf8.DecodeRuneInString(rw.pat[rw.i:])
			writeClassRune(rw.b, r)
			rw.i += n
		}
		first, prevSet = false, false
	}
}
