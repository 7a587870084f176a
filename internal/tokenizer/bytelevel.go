package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// byteToRune is GPT-2's byte→printable-character table: printable Latin-1
// bytes stand for themselves, the other 68 bytes map to U+0100 onwards.
var byteToRune [256]rune

// runeToByte inverts byteToRune (every mapped rune is below 324); -1
// marks runes outside it.
var runeToByte [324]int16

// byteToString caches each byte's mapped character as a string.
var byteToString [256]string

func init() {
	printable := func(b int) bool {
		return b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF
	}
	for r := range runeToByte {
		runeToByte[r] = -1
	}
	n := 0
	for b := 0; b < 256; b++ {
		if printable(b) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = int16(b)
		byteToString[b] = string(byteToRune[b])
	}
}

// byteLevelMap maps every byte of s through byteToRune.
func byteLevelMap(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		b.WriteString(byteToString[s[i]])
	}
	return b.String()
}

// byteLevelUnmap reverses byteLevelMap; ok is false when s holds a
// character outside the table.
func byteLevelUnmap(s string) (raw string, ok bool) {
	buf := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return "", false
		}
		buf = append(buf, byte(runeToByte[r]))
	}
	return string(buf), true
}

// appendByteLevelUnmap appends byteLevelUnmap(s) to buf, or s itself when
// it holds a character outside the table (without allocating either way).
func appendByteLevelUnmap(buf []byte, s string) []byte {
	n := len(buf)
	for _, r := range s {
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return append(buf[:n], s...)
		}
		buf = append(buf, byte(runeToByte[r]))
	}
	return buf
}

// validUTF8Lossy replaces invalid UTF-8 with U+FFFD the way Rust's
// String::from_utf8_lossy does (one replacement per maximal invalid prefix).
func validUTF8Lossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[invalidPrefixLen(b):]
			continue
		}
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// invalidPrefixLen is the length of the maximal prefix of b that could start
// a valid sequence but does not complete one (at least 1), per the WHATWG /
// Rust "substitution of maximal subparts" rule.
func invalidPrefixLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			return i
		}
		lo, hi = 0x80, 0xBF
	}
	return i
}
