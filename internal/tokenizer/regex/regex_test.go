package regex

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/testutil"
)

// The reference files in testdata/ come from the real Rust library through oracle.cjs (see its
// header): patterns.json lists the patterns in the order of the per-pattern fields, with
// "<Whitespace>" standing for the Whitespace pre-tokenizer.
//
//   - adversarial.jsonl.gz: {"text", "spans"} for the inputs of gen_adversarial.py;
//   - golden_hashes.jsonl.gz: {"hash"} per line of the shared golden token files (whose texts are
//     the same in every file), a digest of the spans (see spanHash).

func loadPatterns(t testing.TB) []string {
	data, err := os.ReadFile(filepath.Join("testdata", "patterns.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	if err := json.Unmarshal(data, &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// matchers returns, per pattern of patterns.json, the matchers under test by name: the scanner
// and the forced regexp2 fallback (the Whitespace pre-tokenizer has only its scanner).
func matchers(t testing.TB, ps []string) []map[string]Matcher {
	out := make([]map[string]Matcher, len(ps))
	for i, p := range ps {
		if p == "<Whitespace>" {
			out[i] = map[string]Matcher{"scanner": Whitespace()}
			continue
		}
		sc, ok := scanners[p]
		if !ok {
			t.Fatalf("pattern %q has no scanner", p)
		}
		fb, err := CompileFallback(p)
		if err != nil {
			t.Fatalf("fallback for %q: %v", p, err)
		}
		out[i] = map[string]Matcher{"scanner": sc, "fallback": fb}
	}
	return out
}

func TestAdversarial(t *testing.T) {
	ps := loadPatterns(t)
	ms := matchers(t, ps)
	type record struct {
		Text  string
		Spans [][][2]int
	}
	recs := testutil.ReadJSONL[record](t, filepath.Join("testdata", "adversarial.jsonl.gz"))
	if len(recs) != 20071 {
		t.Fatalf("%d adversarial strings read, want 20071", len(recs))
	}
	// The regexp2 fallback is the slow side; -short checks it on every
	// tenth string (the scanners still see all of them), the full run on all.
	fallbackEvery := 1
	if testing.Short() {
		fallbackEvery = 10
	}
	n, bad := 0, 0
	for i, rec := range recs {
		if len(rec.Spans) != len(ps) {
			t.Fatalf("%q has spans for %d patterns, want %d", rec.Text, len(rec.Spans), len(ps))
		}
		n++
		for pi, want := range rec.Spans {
			for name, m := range ms[pi] {
				if name == "fallback" && i%fallbackEvery != 0 {
					continue
				}
				if got := m.FindAll(rec.Text, nil); !slices.Equal(got, want) {
					if bad++; bad <= 20 {
						t.Errorf("%s of %.40q on %q:\n got %v\nwant %v", name, ps[pi], rec.Text, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d strings × %d patterns compared with the Rust library", n, len(ps))
	if bad > 0 {
		t.Errorf("%d mismatches", bad)
	}
}

// spanHash is the digest oracle.cjs --hash writes: SHA-256 of "start,end;" per span, first 16
// hex digits.
func spanHash(spans [][2]int) string {
	var buf []byte
	for _, s := range spans {
		buf = strconv.AppendInt(buf, int64(s[0]), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(s[1]), 10)
		buf = append(buf, ';')
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:8])
}

// goldenTexts reads the texts of the shared golden token file (skips when shared is absent).
func goldenTexts(t testing.TB) []string {
	var texts []string
	for _, rec := range testutil.ReadJSONL[struct{ Text string }](t, filepath.Join(testutil.RefDir(t), "golden", "tokens", "llama3.jsonl")) {
		texts = append(texts, rec.Text)
	}
	return texts
}

func TestGoldenCorpus(t *testing.T) {
	texts := goldenTexts(t)
	ps := loadPatterns(t)
	ms := matchers(t, ps)
	if testing.Short() {
		for _, m := range ms {
			delete(m, "fallback") // the slow half; the scanners still run on everything
		}
	}
	i, bad := 0, 0
	for _, rec := range testutil.ReadJSONL[struct{ Hash []string }](t, filepath.Join("testdata", "golden_hashes.jsonl.gz")) {
		if i >= len(texts) {
			t.Fatalf("more hashes than golden texts")
		}
		if len(rec.Hash) != len(ps) {
			t.Fatalf("golden line %d has hashes for %d patterns, want %d", i+1, len(rec.Hash), len(ps))
		}
		for pi, want := range rec.Hash {
			for name, m := range ms[pi] {
				if got := spanHash(m.FindAll(texts[i], nil)); got != want {
					if bad++; bad <= 10 {
						t.Errorf("%s of %.40q differs from the Rust library on golden line %d: %.80q", name, ps[pi], i+1, texts[i])
					}
				}
			}
		}
		i++
	}
	if i != len(texts) {
		t.Errorf("%d hashes for %d golden texts", i, len(texts))
	}
	t.Logf("%d golden texts × %d patterns compared with the Rust library", i, len(ps))
	if bad > 0 {
		t.Errorf("%d mismatches", bad)
	}
}

func TestCompile(t *testing.T) {
	for _, p := range loadPatterns(t) {
		if p == "<Whitespace>" {
			continue
		}
		m, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(scanFunc); !ok {
			t.Errorf("Compile(%.40q) did not pick the scanner", p)
		}
	}
	for _, tc := range []struct {
		pattern, in string
		want        [][2]int
	}{
		{`a*`, "baa", [][2]int{{0, 0}, {1, 3}}}, // onig find_iter: no empty match right after a match
		{`x*`, "axxb", [][2]int{{0, 0}, {1, 3}, {4, 4}}},
		{``, "ab", [][2]int{{0, 0}, {1, 1}, {2, 2}}},
		{`(?i:'s)`, "'S'ſ's", [][2]int{{0, 2}, {2, 5}, {5, 7}}},
		{`(?i:k)`, "Kk\u212a", [][2]int{{0, 1}, {1, 2}, {2, 5}}},
		{`\x{4e00}+|\P{L}`, "一一a1", [][2]int{{0, 6}, {7, 8}}},
		{`[\S&]+`, "ab c", [][2]int{{0, 2}, {3, 4}}},
		{`.`, "a\nb", [][2]int{{0, 1}, {2, 3}}},
	} {
		m, err := Compile(tc.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.pattern, err)
			continue
		}
		if got := m.FindAll(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("%q on %q: got %v, want %v", tc.pattern, tc.in, got, tc.want)
		}
	}
	for _, p := range []string{`^a`, `a$`, `\d`, `\b`, `\h`, `(?i:ss)`, `(?i:st)`, `(?i)a`, `(?i:[a-z])`, `(?i:é)`,
		`a*+`, `a{,3}`, `[a[b]]`, `[a&&b]`, `\p{Greek}`, `\1`, `(?m:.)`, `(?<n>a)`, `[\p{L}-z]`, `[a-\s]`, `[\W]`} {
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile(%q) accepted a construct it cannot run exactly", p)
		}
	}
}

// FuzzScanners cross-checks every scanner against the regexp2 fallback of the same pattern.
func FuzzScanners(f *testing.F) {
	for _, s := range []string{"Hello world's  a  b\n\n x", "'ſ 'K ǅ x\u0301 ١٢٣ 中文ひら 👨\u200d👩 a//\r\n", " ?!\t\u3000\u0085"} {
		f.Add(s)
	}
	var ps []string
	for p := range scanners {
		ps = append(ps, p)
	}
	ms := matchers(f, ps)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // the Rust library only ever sees valid UTF-8
		}
		for i, m := range ms {
			a, b := m["scanner"].FindAll(s, nil), m["fallback"].FindAll(s, nil)
			if !slices.Equal(a, b) {
				t.Fatalf("%.40q on %q: scanner %v, fallback %v", ps[i], s, a, b)
			}
		}
	})
}

func BenchmarkScan(b *testing.B) {
	texts := goldenTexts(b)
	total := 0
	for _, s := range texts {
		total += len(s)
	}
	ps := loadPatterns(b)
	ms := matchers(b, ps)
	names := []string{"cl100k", "qwen", "o200k", "digits", "cjk", "deepseek", "gpt2", "words", "whitespace"}
	var dst [][2]int
	for i, p := range ps {
		name := strconv.Itoa(i)
		if i < len(names) {
			name = names[i]
		}
		for _, kind := range []string{"scanner", "fallback"} {
			m, ok := ms[i][kind]
			if !ok {
				continue
			}
			b.Run(name+"/"+kind, func(b *testing.B) {
				_ = p
				b.SetBytes(int64(total))
				for b.Loop() {
					for _, s := range texts {
						dst = m.FindAll(s, dst[:0])
					}
				}
			})
		}
	}
}
