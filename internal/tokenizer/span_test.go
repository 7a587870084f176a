package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// spanModels are the models EncodeSpan proves spans for (byte-level BPE on
// forward scanners), DeepSeek (whose first step splits digits only) and
// one it must refuse (Metaspace).
var spanModels = []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "mistral7b-metaspace"}

// TestEncodeSpanGolden places every golden text between two others (and
// between a chat header and a marker) and requires, wherever EncodeSpan
// proves the span's count, that it is the Rust library's count of that
// text alone; the ids are Encode's. Proofs must be found for the
// byte-level models, or the test would prove nothing.
func TestEncodeSpanGolden(t *testing.T) {
	shared := testutil.RefDir(t)
	for _, model := range spanModels {
		t.Run(model, func(t *testing.T) {
			tk := loadShared(t, model)
			lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
			proved := 0
			for i, l := range lines {
				if l.Text == "" {
					continue
				}
				prev, next := lines[(i+len(lines)-1)%len(lines)].Text, lines[(i+1)%len(lines)].Text
				for _, w := range [][2]string{
					{prev, next},
					{"<|im_start|>user\n", "\n\n[rid:0123456789abcdef]<|im_end|>\n<|im_start|>assistant\n"},
					{"<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>"},
					{"x", ""},
				} {
					s := w[0] + l.Text + w[1]
					ids, span, ok := tk.EncodeSpan(s, len(w[0]), len(w[0])+len(l.Text))
					if want := tk.Encode(s); !slices.Equal(ids, want) {
						t.Fatalf("line %d in %q…%q: ids differ from Encode", i, w[0], w[1])
					}
					if !ok {
						continue
					}
					proved++
					if span != len(l.IDs) {
						t.Fatalf("line %d (%.60q) in %q…%q: span count %d, Rust counts %d", i, l.Text, w[0], w[1], span, len(l.IDs))
					}
				}
			}
			t.Logf("%d of %d spans proved", proved, 4*len(lines))
			switch model {
			case "mistral7b-metaspace":
				if proved != 0 {
					t.Errorf("Metaspace spans proved: its prefix rule depends on where a piece starts")
				}
			case "deepseek_v3":
				// Its first step splits digits only, so a span rarely starts
				// at one of its pieces; what it proves must still hold.
			default:
				if proved < len(lines)/4 {
					t.Errorf("only %d spans proved", proved)
				}
			}
		})
	}
}

// FuzzEncodeSpan: EncodeSpan's ids are Encode's, and a proved span count
// is Count of the span.
func FuzzEncodeSpan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint16(1), uint16(len(s)))
	}
	f.Add("<|im_start|>user\nCall me Ishmael. Some years ago\n\n[rid:ab]<|im_end|>", uint16(17), uint16(47))
	f.Add("abc  def\n\n  ghi jkl", uint16(3), uint16(15))
	f.Add("it's  a test's end 's", uint16(0), uint16(14))
	models := map[string]*Tokenizer{}
	for _, m := range []string{"llama3", "gptoss", "qwen3", "deepseek_v3"} {
		models[m] = loadShared(f, m)
	}
	f.Fuzz(func(t *testing.T, s string, p, q uint16) {
		for name, tk := range models {
			ids, span, ok := tk.EncodeSpan(s, int(p), int(q))
			if want := tk.Encode(s); !slices.Equal(ids, want) {
				t.Fatalf("%s: EncodeSpan(%q) ids %v, Encode %v", name, s, ids, want)
			}
			if ok {
				if want := tk.Count(s[p:q]); span != want {
					t.Fatalf("%s: EncodeSpan(%q, %d, %d) span %d, Count(%q) = %d", name, s, p, q, span, s[p:q], want)
				}
			}
		}
	})
}

// TestEncodeSpanSeams covers the seams the proof rests on: the span must
// start where a piece starts, and its end is cut back to a space after a
// letter (or the end of its piece).
func TestEncodeSpanSeams(t *testing.T) {
	tk := loadShared(t, "qwen3")
	for _, c := range []struct {
		s      string
		p, q   int
		proved bool
	}{
		{"<|im_start|>user\nCall me Ishmael.<|im_end|>", 17, 33, true},            // ends at an added token
		{"<|im_start|>user\nCall me Ishmael.\n\n[rid:x]<|im_end|>", 17, 33, true}, // a space after a letter inside
		{"<|im_start|>user\nCallme\n\n[rid:x]<|im_end|>", 17, 23, false},          // no space after a letter
		{"ab cd ef", 1, 8, false},    // starts inside a word
		{"ab   cd ef", 3, 10, false}, // starts inside a run of spaces
		{"ab  cd ef", 3, 9, true},    // starts at " cd": the run gave up its last space
		{"ab cd ef", 2, 8, true},     // starts at " cd"
	} {
		ids, span, ok := tk.EncodeSpan(c.s, c.p, c.q)
		if !slices.Equal(ids, tk.Encode(c.s)) {
			t.Errorf("%q: ids differ from Encode", c.s)
		}
		if ok != c.proved {
			t.Errorf("%q [%d:%d]: proved %v, want %v", c.s, c.p, c.q, ok, c.proved)
		}
		if ok && span != tk.Count(c.s[c.p:c.q]) {
			t.Errorf("%q [%d:%d]: span %d, Count %d", c.s, c.p, c.q, span, tk.Count(c.s[c.p:c.q]))
		}
	}
}

// TestAppendEncodeSpanKeepsDst: AppendEncodeSpan is EncodeSpan after what
// dst holds, on the proved path and on the ones that fall back to Encode
// (a model whose spans are never proved, an invalid span).
func TestAppendEncodeSpanKeepsDst(t *testing.T) {
	const s = "<|im_start|>user\nCall me Ishmael. Some years ago\n\n[rid:x]<|im_end|>"
	for _, c := range []struct {
		model string
		p, q  int
	}{{"qwen3", 17, 48}, {"mistral7b-metaspace", 17, 48}, {"qwen3", 48, 17}} {
		tk := loadShared(t, c.model)
		wantIDs, wantSpan, wantOK := tk.EncodeSpan(s, c.p, c.q)
		dst := make([]int, 3, 64)
		dst[0], dst[1], dst[2] = 7, 8, 9
		ids, span, ok := tk.AppendEncodeSpan(dst, s, c.p, c.q)
		if !slices.Equal(ids[:3], []int{7, 8, 9}) || !slices.Equal(ids[3:], wantIDs) || span != wantSpan || ok != wantOK {
			t.Errorf("%s [%d:%d]: AppendEncodeSpan %v %d %v, want [7 8 9]+%v %d %v", c.model, c.p, c.q, ids, span, ok, wantIDs, wantSpan, wantOK)
		}
		if !slices.Equal(wantIDs, tk.Encode(s)) {
			t.Errorf("%s: EncodeSpan's ids differ from Encode", c.model)
		}
		if proved := c.model == "qwen3" && c.p < c.q; ok != proved {
			t.Errorf("%s [%d:%d]: proved %v, want %v", c.model, c.p, c.q, ok, proved)
		}
	}
}
