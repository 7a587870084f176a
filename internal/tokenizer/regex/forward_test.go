package regex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// endsSeam is tokenizer.endsSeam.
func endsSeam(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r > ' ' && r < 0x7f || r >= 0x2010 && r <= 0x2027
}

// TestForwardCut checks on every hand-written scanner the two claims
// Forward documents for a space after printable ASCII or the punctuation
// of U+2010–U+2027 (tokenizer.Seam's seams), at c in random
// texts: the matches starting before c end by c and are those of the text
// cut at c (the space and what follows change nothing before it), and the
// match at c, if any, is the one found in the text cut just after the next
// such space (it looks no further).
func TestForwardCut(t *testing.T) {
	alphabet := []string{"a", "e", "l", "r", "s", "t", "d", "m", "v", "E", "L", "S", "'", ".", ",", "/", "-", "1", "23", " ", " ", " ", "  ",
		"\n", "\r\n", "—", "’", "“", "…", "\u2028", "\t", "é", "ſ", "中文", "ア", "\u0301", "\u00a0", "\u3000", "!", "(", "$", "_", "ǅ", "ʰ", "²"}
	rng := rand.New(rand.NewPCG(21, 1))
	for pattern, m := range scanners {
		for range 3000 {
			var b strings.Builder
			for range 2 + rng.IntN(14) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			all := m.FindAll(s, nil)
			for c := 1; c < len(s); c++ {
				if s[c] != ' ' || !endsSeam(s[:c]) {
					continue
				}
				var before [][2]int
				for _, sp := range all {
					if sp[0] < c {
						if sp[1] > c {
							t.Fatalf("%.30q: in %q a match %v crosses the space at %d", pattern, s, sp, c)
						}
						before = append(before, sp)
					}
				}
				if cut := m.FindAll(s[:c], nil); !slices.Equal(cut, before) {
					t.Fatalf("%.30q: %q cut at %d gives %v, uncut %v", pattern, s, c, cut, before)
				}
				d := -1
				for i := c + 2; i < len(s); i++ {
					if s[i] == ' ' && endsSeam(s[:i]) {
						d = i
						break
					}
				}
				if d < 0 {
					continue
				}
				full, win := m.FindAll(s[c:], nil), m.FindAll(s[c:d+1], nil)
				if (len(full) > 0 && full[0][0] == 0) != (len(win) > 0 && win[0][0] == 0) ||
					len(full) > 0 && full[0][0] == 0 && full[0] != win[0] {
					t.Fatalf("%.30q: the match at the space of %q differs in %q", pattern, s[c:], s[c:d+1])
				}
			}
		}
	}
}
