package tokenizer

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/islkit/islkit/internal/testutil"
)

// rankModels are the tiktoken-format vocabularies with golden ids from
// tiktoken and mistral-common (testdata/ranks/gen.py), and mistral-common's
// SentencePiece models with sentencepiece's (sp_*: gen_sentencepiece.py).
var rankModels = []string{"tekken_240718", "tekken_240911", "o200k_base", "sp_v1", "sp_v2", "sp_v3", "sp_v7"}

// o200kSHA256 is the SHA-256 tiktoken pins for o200k_base.tiktoken
// (tiktoken_ext/openai_public.py).
const o200kSHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

// rankFile returns a rank model's file: a tekken.json unpacked, or for
// o200k_base the tiktoken file rebuilt from gpt-oss's tokenizer.json as
// gen.py rebuilds it, checked against tiktoken's pin.
func rankFile(t testing.TB, model string) []byte {
	t.Helper()
	if strings.HasPrefix(model, "tekken") || strings.HasPrefix(model, "sp_") {
		name := model + ".json.zst"
		if strings.HasPrefix(model, "sp_") {
			name = model + ".model.zst"
		}
		f, err := os.Open(filepath.Join("testdata", "ranks", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		var b strings.Builder
		if _, err := bufio.NewReader(zr).WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	}
	data, err := os.ReadFile(filepath.Join(testutil.RefDir(t), "models", "gptoss", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		id  int
		tok string
	}
	var es []entry
	for tok, id := range f.Model.Vocab {
		if id < 199998 {
			raw, ok := byteLevelUnmap(tok)
			if !ok {
				t.Fatalf("gpt-oss token %q is not byte-level", tok)
			}
			es = append(es, entry{id, raw})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].id < es[j].id })
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(e.tok)), e.id)
	}
	sum := sha256.Sum256([]byte(b.String()))
	if got := hex.EncodeToString(sum[:]); got != o200kSHA256 {
		t.Fatalf("o200k ranks rebuilt from gpt-oss: SHA-256 %s, tiktoken pins %s", got, o200kSHA256)
	}
	return []byte(b.String())
}

func loadRankModel(t testing.TB, c *Cache, model string) *Tokenizer {
	t.Helper()
	data := rankFile(t, model)
	sum := sha256.Sum256(data)
	var tk *Tokenizer
	var err error
	switch {
	case strings.HasPrefix(model, "tekken"):
		tk, err = c.LoadTekken(data, sum)
	case strings.HasPrefix(model, "sp_"):
		tk, err = c.LoadSentencePiece(data, sum)
	default:
		cfg, _ := TiktokenPreset(model)
		tk, err = c.LoadTiktoken(data, sum, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

type rankGolden struct {
	Line int   `json:"line"`
	IDs  []int `json:"ids"`
}

func readRankGolden(t testing.TB, model string) []rankGolden {
	f, err := os.Open(filepath.Join("testdata", "ranks", model+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<26)
	sc.Scan() // the header: versions
	var out []rankGolden
	for sc.Scan() {
		var g rankGolden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestGoldenRanks requires the ids of tiktoken and mistral-common on every
// golden text, from a fresh load and from a warm cache.
func TestGoldenRanks(t *testing.T) {
	texts := testutil.ReadJSONL[goldenLine](t, filepath.Join(testutil.RefDir(t), "golden", "tokens", "qwen3.jsonl"))
	c := &Cache{Dir: t.TempDir(), Warn: func(msg string) { t.Error(msg) }}
	for _, model := range rankModels {
		t.Run(model, func(t *testing.T) {
			fresh := loadRankModel(t, c, model) // cold: writes the cache
			warm := loadRankModel(t, c, model)
			golden := readRankGolden(t, model)
			if len(golden) != len(texts) || len(golden) != 2519 {
				t.Fatalf("%d golden lines for %d texts", len(golden), len(texts))
			}
			for name, tk := range map[string]*Tokenizer{"fresh": fresh, "cached": warm} {
				bad := 0
				for _, g := range golden {
					text := texts[g.Line].Text
					if got := tk.Encode(text); !slices.Equal(got, g.IDs) {
						bad++
						if bad <= 3 {
							t.Errorf("%s: line %d %q:\n got %v\nwant %v", name, g.Line+1, truncate(text), got, g.IDs)
						}
					}
					if n := tk.Count(text); n != len(g.IDs) {
						t.Errorf("%s: line %d: Count = %d, want %d", name, g.Line+1, n, len(g.IDs))
					}
				}
				if bad > 0 {
					t.Errorf("%s %s: %d/%d lines differ from the reference", model, name, bad, len(golden))
				}
			}
		})
	}
}
