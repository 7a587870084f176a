package unicode16

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestAgainstReference compares each class with the code points the probe
// of the Rust library lists: the \w sets (gen/word.json) always, the Unicode
// 16.0 classes (gen/classes.json.gz) when the run is not -short.
func TestAgainstReference(t *testing.T) {
	checkSets(t, filepath.Join("gen", "word.json"), map[string]Class{`onig\w`: Word, `regex\w`: RegexWord})
	if testing.Short() {
		return
	}
	t.Run("unicode16-classes", func(t *testing.T) {
		checkSets(t, filepath.Join("gen", "classes.json.gz"), map[string]Class{
			`\p{L}`: L, `\p{N}`: N, `\s`: Space, `\p{Lu}`: Lu, `\p{Ll}`: Ll,
			`\p{Lt}`: Lt, `\p{Lm}`: Lm, `\p{Lo}`: Lo, `\p{M}`: M, `\p{P}`: P, `\p{S}`: S})
	})
}

// checkSets checks every class of keys against the ranges path lists for
// its key, over U+0000..U+10FFFF.
func checkSets(t *testing.T, path string, keys map[string]Class) {
	data := testutil.ReadFile(t, path)
	var sets map[string][][2]rune
	if err := json.Unmarshal(data, &sets); err != nil {
		t.Fatal(err)
	}
	for key, c := range keys {
		if len(sets[key]) == 0 {
			t.Fatalf("%s lists no ranges for %s", path, key)
		}
		want := make([]bool, 0x110000)
		for _, r := range sets[key] {
			for x := r[0]; x <= r[1]; x++ {
				want[x] = true
			}
		}
		bad := 0
		for r := rune(0); r <= 0x10FFFF; r++ {
			if Is(c, r) != want[r] {
				if bad++; bad <= 5 {
					t.Errorf("%s: U+%04X: got %v, want %v", key, r, !want[r], want[r])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d code points differ", key, bad)
		}
		if got := Ranges(c); len(got) != len(sets[key]) {
			t.Errorf("%s: Ranges has %d ranges, want %d", key, len(got), len(sets[key]))
		}
	}
}

func TestKnownCodePoints(t *testing.T) {
	for _, tc := range []struct {
		r    rune
		c    Class
		want bool
	}{
		{'a', L | Ll | Word | RegexWord, true}, {'A', Lu, true}, {'7', N, true}, {' ', Space, true},
		{0x85, Space, true}, {0x200B, Space, false}, {0x1C89, L, true}, // 0x1C89: new in Unicode 16.0
		{0x10940, L, false}, {0x323B0, L, false}, // Unicode 17.0 additions are absent
		{0x200D, Word, false}, {0x200D, RegexWord, true}, {-1, L, false}, {0x110000, L, false},
	} {
		if got := Props(tc.r)&tc.c == tc.c; got != tc.want {
			t.Errorf("U+%04X in %b: got %v, want %v", tc.r, tc.c, got, tc.want)
		}
	}
}

var sink Class

func BenchmarkProps(b *testing.B) {
	rs := []rune("The quick brown fox — 敏捷的狐狸 🦊 jumps; Ωμέγα ١٢٣")
	for b.Loop() {
		//lint:ignore S1029,SA6003 decoded once, outside the loop: the benchmark times Props alone
		for _, r := range rs {
			sink |= Props(r)
		}
	}
}
