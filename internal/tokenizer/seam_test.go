package tokenizer

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/testutil"
)

// seamHolds is the claim Seam makes, checked by encoding: x+y+z whole
// against x and y+z apart, and x' (another text ending in x's last byte)
// in x's place.
func seamHolds(tk *Tokenizer, x, y, z string) bool {
	whole := tk.Encode(x + y + z)
	apart := append(tk.Encode(x), tk.Encode(y+z)...)
	if !slices.Equal(whole, apart) {
		return false
	}
	_, n := utf8.DecodeLastRuneInString(x)
	other := "<|im_start|>user\nSome words, 12 of them: " + x[len(x)-n:]
	return slices.Equal(tk.Encode(other+y+z), append(tk.Encode(other), tk.Encode(y+z)...))
}

// TestSeamGolden joins every golden text (the adversarial ones included:
// whitespace runs, contractions, digits, scripts, added tokens' text) to
// its neighbours and requires, wherever Seam proves a cut, that the whole
// encodes as its sides apart; proofs must be found on the byte-level models
// and none on DeepSeek-V3 (its first step splits digits only, so no piece
// is known to start at a space) or the Metaspace one.
func TestSeamGolden(t *testing.T) {
	shared := testutil.RefDir(t)
	for _, model := range spanModels {
		t.Run(model, func(t *testing.T) {
			tk := loadShared(t, model)
			lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
			proved, tried := 0, 0
			for i, l := range lines {
				prev := strings.TrimRight(lines[(i+len(lines)-1)%len(lines)].Text, " ")
				next := lines[(i+1)%len(lines)].Text
				for _, c := range [][3]string{
					{prev, " " + l.Text, next},
					{prev + "x", " " + l.Text, ""},
					{"<|im_start|>user\nCall me Ishmael", " " + l.Text, "\n\n[rid:0123456789abcdef]<|im_end|>\n"},
					{prev + ".", " " + strings.TrimLeft(l.Text, " "), " " + next},
					{prev + "”", " " + strings.TrimLeft(l.Text, " "), " " + next},
				} {
					x, y, z := c[0], c[1], c[2]
					if x == "" {
						continue
					}
					tried++
					if !tk.Seam(x, y) {
						continue
					}
					proved++
					if !seamHolds(tk, x, y, z) {
						t.Fatalf("line %d: Seam(%.40q, %.40q) proved, but %.40q…%.40q does not encode as its sides apart", i, x, y, y, z)
					}
				}
			}
			t.Logf("%d of %d seams proved", proved, tried)
			switch model {
			case "mistral7b-metaspace", "deepseek_v3":
				if proved != 0 {
					t.Errorf("%d seams proved on %s", proved, model)
				}
			default:
				if proved < tried/4 {
					t.Errorf("only %d of %d seams proved", proved, tried)
				}
			}
		})
	}
}

// TestSeamCases: what the proof asks of each side.
func TestSeamCases(t *testing.T) {
	tk := loadShared(t, "qwen3")
	for _, c := range []struct {
		x, y   string
		proved bool
	}{
		{"Call me", " Ishmael. Some", true},
		{"years ago.", " Never mind how", true},    // punctuation before the cut
		{"12", " 34 56", true},                     // digits on both sides
		{"Call me ", " Ishmael. Some", false},      // x ends in a space
		{"Call me\n", " Ishmael. Some", false},     // … or a newline
		{"Call mé", " Ishmael. Some", false},       // a non-ASCII letter before the cut
		{"Call “me”", " Ishmael— Some", true},      // quotation marks and dashes before spaces
		{"Call me", "Ishmael. Some", false},        // y does not open with a space
		{"Call me", "  Ishmael. Some", true},       // a run of spaces: a match starts at it
		{"Call me", " Ishmael.", false},            // no later space to bound the first match
		{"Call me", " Ish<|im_end|> Some", false},  // an added token in the window
		{"Call me", " Ishmaël. Some", true},        // NFC text in the window
		{"Call me", " Ishmae\u0308l. Some", false}, // NFC would change the window
		{"", " Ishmael. Some", false},              // nothing before
	} {
		if got := tk.Seam(c.x, c.y); got != c.proved {
			t.Errorf("Seam(%q, %q) = %v, want %v", c.x, c.y, got, c.proved)
		}
		if c.proved && !seamHolds(tk, c.x, c.y, " and more.") {
			t.Errorf("Seam(%q, %q) proved a cut that does not hold", c.x, c.y)
		}
	}
	for _, model := range []string{"deepseek_v3", "mistral7b-metaspace"} {
		if loadShared(t, model).Seam("Call me", " Ishmael. Some") {
			t.Errorf("%s: a seam proved", model)
		}
	}
}

// FuzzSeam: a proved seam holds.
func FuzzSeam(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("Call me", " "+s, s)
	}
	f.Add("it's", " 're 've done", "'ll")
	f.Add("a/", " /b c", "\r\n")
	models := map[string]*Tokenizer{}
	for _, m := range []string{"llama3", "gptoss", "qwen3", "deepseek_v3"} {
		models[m] = loadShared(f, m)
	}
	f.Fuzz(func(t *testing.T, x, y, z string) {
		if !utf8.ValidString(x + y + z) {
			return // the claim is about valid text (Encode replaces the rest)
		}
		for name, tk := range models {
			if tk.Seam(x, y) && !seamHolds(tk, x, y, z) {
				t.Fatalf("%s: Seam(%q, %q) proved, but with %q it does not hold", name, x, y, z)
			}
			if tk.SeamEnd(x, y+z) && !seamHolds(tk, x, y+z, "") {
				t.Fatalf("%s: SeamEnd(%q, %q) proved, but it does not hold", name, x, y+z)
			}
		}
	})
}

// TestSeamEnd: a cut before a text's last part is proved without a later
// space, and holds (by encoding), on the golden texts and their first
// words; Seam proves fewer of those.
func TestSeamEnd(t *testing.T) {
	shared := testutil.RefDir(t)
	tk := loadShared(t, "qwen3")
	for _, c := range []struct {
		x, y   string
		proved bool
	}{
		{"Call me", " Ishmael.", true},  // Seam needs a later space here
		{"Call me", " Ish", true},       // a word's start
		{"Call me", " ", false},         // a space alone
		{"Call me ", " Ishmael", false}, // x ends in a space
		{"Call me", "Ishmael", false},   // no space at the cut
		{"Call me", " Ish<|im_end|>", false},
		{"Call me", " Ishmae\u0308l", false},
	} {
		if got := tk.SeamEnd(c.x, c.y); got != c.proved {
			t.Errorf("SeamEnd(%q, %q) = %v, want %v", c.x, c.y, got, c.proved)
		}
		if c.proved && !seamHolds(tk, c.x, c.y, "") {
			t.Errorf("SeamEnd(%q, %q) proved a cut that does not hold", c.x, c.y)
		}
	}
	for _, model := range spanModels {
		tk := loadShared(t, model)
		lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
		proved, seams := 0, 0
		for i, l := range lines {
			x := strings.TrimRight(lines[(i+len(lines)-1)%len(lines)].Text, " ") + "x"
			y := " " + l.Text
			// The whole line, and its first word or two (a short y).
			ends := []int{len(y)}
			if i := strings.IndexByte(y[1:], ' '); i > 0 {
				ends = append(ends, i+1)
				if j := strings.IndexByte(y[i+2:], ' '); j > 0 {
					ends = append(ends, i+2+j)
				}
			}
			for _, end := range ends {
				if tk.Seam(x, y[:end]) {
					seams++
				}
				if !tk.SeamEnd(x, y[:end]) {
					continue
				}
				proved++
				if !seamHolds(tk, x, y[:end], "") {
					t.Fatalf("%s line %d: SeamEnd(%.40q, %.40q) proved, but it does not hold", model, i, x, y[:end])
				}
			}
		}
		t.Logf("%s: %d cuts proved (Seam: %d)", model, proved, seams)
		switch model {
		case "mistral7b-metaspace", "deepseek_v3":
			if proved != 0 {
				t.Errorf("%s: %d cuts proved", model, proved)
			}
		default:
			if proved <= seams {
				t.Errorf("%s: SeamEnd proved %d cuts, no more than Seam's %d", model, proved, seams)
			}
		}
	}
}

// TestTextSeams: at every index TextSeams gives, a golden text's ids
// (Rust's) are the encodings of its two sides.
func TestTextSeams(t *testing.T) {
	shared := testutil.RefDir(t)
	for _, model := range spanModels {
		tk := loadShared(t, model)
		lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
		found := 0
		for i, l := range lines {
			for j, s := range tk.TextSeams(l.Text, l.IDs) {
				if j%32 != 0 {
					continue // a sample: encoding both sides of every seam is slow
				}
				found++
				k, off := int(s[0]), int(s[1])
				if a, b := tk.Encode(l.Text[:off]), tk.Encode(l.Text[off:]); !slices.Equal(a, l.IDs[:k]) || !slices.Equal(b, l.IDs[k:]) {
					t.Fatalf("%s line %d: seam at id %d (byte %d): sides encode to %v and %v, ids %v and %v", model, i+1, k, off, a, b, l.IDs[:k], l.IDs[k:])
				}
			}
		}
		t.Logf("%s: %d seams", model, found)
		switch model {
		case "mistral7b-metaspace", "deepseek_v3":
			if found != 0 {
				t.Errorf("%s: %d seams found", model, found)
			}
		default:
			if found == 0 {
				t.Errorf("%s: no seams found", model)
			}
		}
	}
}
