package regex

import (
	"unicode/utf8"

	u "github.com/islkit/islkit/internal/unicode16"
)

// Pattern strings with a hand-written scanner, verbatim as they appear in tokenizer.json files
// (after JSON unescaping; DeepSeek's third pattern holds literal CR and LF characters).
const (
	PatternCL100K   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	PatternQwen     = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	PatternO200K    = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	PatternDigits   = `\p{N}{1,3}`
	PatternCJK      = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	PatternDeepSeek = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
	PatternGPT2     = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// PatternWords is the Whitespace pre-tokenizer's pattern; as a Split regex it runs on
	// Oniguruma (see Whitespace for the pre-tokenizer itself).
	PatternWords = `\w+|[^\w\s]+`
)

var scanners = map[string]Matcher{
	PatternCL100K:   scanFunc(func(s string, i int) int { return scanCL100K(s, i, 3) }),
	PatternQwen:     scanFunc(func(s string, i int) int { return scanCL100K(s, i, 1) }),
	PatternO200K:    scanFunc(scanO200K),
	PatternDigits:   scanFunc(scanDigits),
	PatternCJK:      scanFunc(scanCJK),
	PatternDeepSeek: scanFunc(scanDeepSeek),
	PatternGPT2:     scanFunc(scanGPT2),
	PatternWords:    scanFunc(scanOnigWords),
}

// scanFunc adapts "end of the match starting at i, or -1" into a Matcher. None of the scanned
// patterns can match the empty string, so a failed position just moves on by one character, as
// Oniguruma's forward search does.
type scanFunc func(s string, i int) int

func (f scanFunc) FindAll(s string, dst [][2]int) [][2]int {
	for i := 0; i < len(s); {
		if e := f(s, i); e > i {
			dst = append(dst, [2]int{i, e})
			i = e
		} else if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
	}
	return dst
}

// at decodes the character at i (i < len(s)) with its classes and size.
func at(s string, i int) (rune, u.Class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), u.Props(rune(c)), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, u.Props(r), n
}

// propsAt returns the classes of the character at i, or 0 at the end of s.
func propsAt(s string, i int) u.Class {
	if i >= len(s) {
		return 0
	}
	_, p, _ := at(s, i)
	return p
}

// runIn returns the end of the run of characters from i whose classes intersect mask.
func runIn(s string, i int, mask u.Class) int {
	for i < len(s) {
		_, p, n := at(s, i)
		if p&mask == 0 {
			break
		}
		i += n
	}
	return i
}

// runOut returns the end of the run of characters from i whose classes avoid mask.
func runOut(s string, i int, mask u.Class) int {
	for i < len(s) {
		_, p, n := at(s, i)
		if p&mask != 0 {
			break
		}
		i += n
	}
	return i
}

// upTo returns the end of at most max characters from i whose classes intersect mask.
func upTo(s string, i int, mask u.Class, max int) int {
	for ; max > 0 && i < len(s); max-- {
		_, p, n := at(s, i)
		if p&mask == 0 {
			break
		}
		i += n
	}
	return i
}

// contraction matches `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at i and returns its end, or -1. Oniguruma's
// case folding lets U+017F (ſ) stand for s; no other non-ASCII character folds to one of these
// letters (checked against the library for every code point), and none of the alternatives spells
// a multi-character fold such as "ss".
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return -1
	}
	c := s[i+1]
	if fold {
		if c == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // U+017F LATIN SMALL LETTER LONG S
			return i + 3
		}
		c |= 0x20 // ASCII lower case; harmless for the non-letters compared below
	}
	switch c {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v', 'l':
		if i+2 >= len(s) {
			return -1
		}
		d := s[i+2]
		if fold {
			d |= 0x20
		}
		if (c == 'l' && d == 'l') || (c != 'l' && d == 'e') {
			return i + 3
		}
	}
	return -1
}

// spaces matches the shared tail `\s*[\r\n]+|\s+(?!\S)|\s+` at i (p: the classes at i).
func spaces(s string, i int, p u.Class) int {
	if p&u.Space == 0 {
		return -1
	}
	j := runIn(s, i, u.Space)
	// \s*[\r\n]+: \s* backs off to the last CR or LF in the run, and [\r\n]+ takes just that one
	// (whatever followed it in the run was given to \s* already). CR and LF bytes occur in UTF-8
	// only as those characters.
	for k := j - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	return backOffLast(s, i, j)
}

// backOffLast is `\s+(?!\S)|\s+` for the whitespace run s[i:j]: the whole run at the end of
// input; otherwise all but the last character, which leaves that one to precede the next word. A
// single character falls through to \s+.
func backOffLast(s string, i, j int) int {
	if j == len(s) {
		return j
	}
	_, n := utf8.DecodeLastRuneInString(s[:j])
	if j-n > i {
		return j - n
	}
	return j
}

// crlf returns the end of the run of CR/LF bytes (and '/' when slash) from i.
func crlf(s string, i int, slash bool) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/')) {
		i++
	}
	return i
}

// punct matches ` ?X+` at i, where X is the class "avoids mask"; r, p: the character at i and its
// classes.
func punct(s string, i int, r rune, p u.Class, mask u.Class) int {
	j := i
	if r == ' ' {
		if i+1 < len(s) && propsAt(s, i+1)&mask == 0 {
			j = i + 1
		} else if p&mask != 0 {
			return -1
		}
	} else if p&mask != 0 {
		return -1
	}
	return runOut(s, j, mask)
}

// scanCL100K scans the Llama-3 (cl100k) pattern, or Qwen's when digits is 1.
func scanCL100K(s string, i int, digits int) int {
	r, p, n := at(s, i)
	if r == '\'' {
		if e := contraction(s, i, true); e > 0 {
			return e
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if p&u.L != 0 {
		return runIn(s, i, u.L)
	}
	if p&u.N == 0 && r != '\r' && r != '\n' && propsAt(s, i+n)&u.L != 0 {
		return runIn(s, i+n, u.L)
	}
	if p&u.N != 0 {
		return upTo(s, i, u.N, digits)
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	if e := punct(s, i, r, p, u.Space|u.L|u.N); e > 0 {
		return crlf(s, e, false)
	}
	return spaces(s, i, p)
}

const (
	upperish = u.Lu | u.Lt | u.Lm | u.Lo | u.M // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	lowerish = u.Ll | u.Lm | u.Lo | u.M        // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// o200kWord matches `U*W+` (upper false) or `U+W*` (upper true) from j, where U is upperish and
// W lowerish, followed by the optional contraction; it returns the end or -1.
func o200kWord(s string, j int, upper bool) int {
	// Walk the greedy U run, remembering where the last character that is also in W ended: when
	// no W follows the run, U* gives back characters until W+ can start on that one.
	q, lastW := j, -1
	for q < len(s) {
		_, p, n := at(s, q)
		if p&upperish == 0 {
			break
		}
		q += n
		if p&lowerish != 0 {
			lastW = q
		}
	}
	var e int
	switch {
	case upper:
		if q == j {
			return -1
		}
		e = runIn(s, q, lowerish)
	case propsAt(s, q)&lowerish != 0:
		e = runIn(s, q, lowerish)
	case lastW >= 0:
		e = lastW
	default:
		return -1
	}
	if e < len(s) && s[e] == '\'' {
		if c := contraction(s, e, true); c > 0 {
			return c
		}
	}
	return e
}

func scanO200K(s string, i int) int {
	r, p, n := at(s, i)
	optional := p&(u.L|u.N) == 0 && r != '\r' && r != '\n' // [^\r\n\p{L}\p{N}]?
	for _, upper := range [2]bool{false, true} {
		if optional && i+n < len(s) {
			if e := o200kWord(s, i+n, upper); e > 0 {
				return e
			}
		}
		if e := o200kWord(s, i, upper); e > 0 {
			return e
		}
	}
	if p&u.N != 0 {
		return upTo(s, i, u.N, 3)
	}
	if e := punct(s, i, r, p, u.Space|u.L|u.N); e > 0 {
		return crlf(s, e, true)
	}
	return spaces(s, i, p)
}

func scanDigits(s string, i int) int {
	if propsAt(s, i)&u.N == 0 {
		return -1
	}
	return upTo(s, i, u.N, 3)
}

func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FA5) || (r >= 0x3040 && r <= 0x30FF)
}

func scanCJK(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= utf8.RuneSelf {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !isCJK(r) {
			break
		}
		j += n
	}
	return j
}

// asciiPunct is the class [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~].
func asciiPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}

func asciiLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func scanDeepSeek(s string, i int) int {
	if asciiPunct(s[i]) && i+1 < len(s) && asciiLetter(s[i+1]) {
		j := i + 2
		for j < len(s) && asciiLetter(s[j]) {
			j++
		}
		return j
	}
	r, p, n := at(s, i)
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if p&(u.L|u.P|u.S) == 0 && r != '\r' && r != '\n' && propsAt(s, i+n)&(u.L|u.M) != 0 {
		return runIn(s, i+n, u.L|u.M)
	}
	if p&(u.L|u.M) != 0 {
		return runIn(s, i, u.L|u.M)
	}
	// ` ?[\p{P}\p{S}]+[\r\n]*`
	j := i
	if r == ' ' && propsAt(s, i+1)&(u.P|u.S) != 0 {
		j = i + 1
	}
	if propsAt(s, j)&(u.P|u.S) != 0 {
		return crlf(s, runIn(s, j, u.P|u.S), false)
	}
	return spaces(s, i, p)
}

func scanGPT2(s string, i int) int {
	r, p, _ := at(s, i)
	if r == '\'' {
		if e := contraction(s, i, false); e > 0 {
			return e
		}
	}
	j := i
	if r == ' ' && i+1 < len(s) {
		j = i + 1
		p = propsAt(s, j)
	}
	// ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+` in order; when the space is followed by
	// another space (or nothing), each of them fails and the space falls to the \s alternatives.
	switch {
	case p&u.L != 0:
		return runIn(s, j, u.L)
	case p&u.N != 0:
		return runIn(s, j, u.N)
	case p&u.Space == 0:
		return runOut(s, j, u.Space|u.L|u.N)
	}
	return spacesNoNewline(s, i)
}

// spacesNoNewline matches `\s+(?!\S)|\s+` at i, where the character at i is whitespace.
func spacesNoNewline(s string, i int) int {
	return backOffLast(s, i, runIn(s, i, u.Space))
}

// latin1NotClassWord reports the characters that Oniguruma's \w matches on its own but not inside
// a bracket class: ² ³ ¹ ¼ ½ ¾ (probed: `\w` holds them, `[\w]` and `[^\w\s]` treat them as
// non-word).
func latin1NotClassWord(r rune) bool {
	return r == 0xB2 || r == 0xB3 || r == 0xB9 || r == 0xBC || r == 0xBD || r == 0xBE
}

// scanOnigWords scans `\w+|[^\w\s]+` as Oniguruma runs it, with the bracket-class quirk above.
func scanOnigWords(s string, i int) int {
	_, p, _ := at(s, i)
	if p&u.Word != 0 {
		return runIn(s, i, u.Word)
	}
	if p&u.Space != 0 {
		return -1
	}
	for i < len(s) {
		r, p, n := at(s, i)
		if p&u.Space != 0 || (p&u.Word != 0 && !latin1NotClassWord(r)) {
			break
		}
		i += n
	}
	return i
}

// scanRegexWhitespace scans `\w+|[^\w\s]+` as the Rust regex crate runs it.
func scanRegexWhitespace(s string, i int) int {
	_, p, _ := at(s, i)
	switch {
	case p&u.RegexWord != 0:
		return runIn(s, i, u.RegexWord)
	case p&u.Space == 0:
		return runOut(s, i, u.RegexWord|u.Space)
	}
	return -1
}
