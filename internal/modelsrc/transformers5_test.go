package modelsrc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testutil"
)

// TestTransformers5Rebuild asserts that a Llama-class folder loaded
// AsTransformers5 encodes every golden text as transformers 5.19 does
// (testdata/vllm/transformers5-ids.jsonl.gz, scripts/vllm/transformers5_ids.py:
// the lines whose ids differ from tokenizer.json's golden ids, the rest
// equal to them), special tokens included; and that without the option
// the folder is read as its tokenizer.json says.
func TestTransformers5Rebuild(t *testing.T) {
	ref := testutil.RefDir(t)
	type line struct {
		Model, Text string
		Special     bool
		IDs         []int
	}
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "testdata", "vllm", "transformers5-ids.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	var header struct {
		SameAsGolden map[string]int `json:"same_as_golden"`
	}
	override := map[string][]int{}
	var special []line
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			if err := json.Unmarshal(sc.Bytes(), &header); err != nil || len(header.SameAsGolden) == 0 {
				t.Fatalf("header: %v", err)
			}
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if l.Special {
			special = append(special, l)
		} else {
			override[l.Model+"\x00"+l.Text] = l.IDs
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	stderr := Stderr
	Stderr = discard{}
	t.Cleanup(func() { Stderr = stderr })
	for model, same := range header.SameAsGolden {
		t.Run(model, func(t *testing.T) {
			src, err := Resolve(filepath.Join(ref, "models", model))
			if err != nil {
				t.Fatal(err)
			}
			src.AsTransformers5 = true
			tok, err := src.Tokenizer()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := src.Build(); b != Transformers5Llama {
				t.Fatalf("build %q, want %q", b, Transformers5Llama)
			}
			plain, err := Resolve(filepath.Join(ref, "models", model))
			if err != nil {
				t.Fatal(err)
			}
			plainTok, err := plain.Tokenizer()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := plain.Build(); b != "" {
				t.Errorf("without AsTransformers5: build %q", b)
			}
			golden := readGolden(t, filepath.Join(ref, "golden", "tokens", model+".jsonl"))
			equal, differ := 0, 0
			for _, g := range golden {
				want, ok := override[model+"\x00"+g.Text]
				if ok {
					differ++
				} else {
					want = g.IDs
					equal++
				}
				if got := tok.Encode(g.Text); !slices.Equal(got, want) {
					t.Errorf("%q: %v, transformers 5 %v", g.Text, got, want)
				}
				if got := plainTok.Encode(g.Text); !slices.Equal(got, g.IDs) {
					t.Errorf("without AsTransformers5: %q: %v, tokenizer.json %v", g.Text, got, g.IDs)
				}
			}
			if equal != same || differ == 0 {
				t.Errorf("%d golden texts the same as tokenizer.json's, transformers 5 says %d; %d differ", equal, same, differ)
			}
			for _, l := range special {
				if l.Model != model {
					continue
				}
				if got := tok.EncodeWithSpecialTokens(l.Text); !slices.Equal(got, l.IDs) {
					t.Errorf("with special tokens: %q: %v, transformers 5 %v", l.Text, got, l.IDs)
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type goldenLine struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readGolden(t *testing.T, path string) []goldenLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, g)
	}
	return out
}

// TestTransformers5Exempt asserts the folders transformers 5 reads as
// they are stay so: another class, a model_type of its exempt list, a
// Hub id it keeps, remote code.
func TestTransformers5Exempt(t *testing.T) {
	for i, tc := range []struct{ name, config, tokConfig string }{
		{"a", `{"model_type":"llama"}`, `{"tokenizer_class":"PreTrainedTokenizerFast"}`},
		{"b", `{"model_type":"deepseek_v3"}`, `{"tokenizer_class":"LlamaTokenizerFast"}`},
		{"deepseek-ai/DeepSeek-R1-Distill-Llama-8B", `{"model_type":"llama"}`, `{"tokenizer_class":"LlamaTokenizerFast"}`},
		{"c", `{"model_type":"llama"}`, `{"tokenizer_class":"LlamaTokenizer","auto_map":{"AutoTokenizer":["x.Y",null]}}`},
	} {
		dir := t.TempDir()
		for name, body := range map[string]string{"config.json": tc.config, "tokenizer_config.json": tc.tokConfig} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := &Source{Name: tc.name, Dir: dir, FS: os.DirFS(dir)}
		if got, err := s.transformers5Rebuilds(); got || err != nil {
			t.Errorf("%d %s: rebuilds %v (%v), want false", i, tc.name, got, err)
		}
		// The same folder with a Llama class, a Llama model_type, a local name: rebuilt.
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"mistral"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"tokenizer_class":"LlamaTokenizerFast"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		s = &Source{Name: fmt.Sprint("local", i), Dir: dir, FS: os.DirFS(dir)}
		if got, err := s.transformers5Rebuilds(); !got || err != nil {
			t.Errorf("%d: Llama class, model_type mistral: rebuilds %v (%v), want true", i, got, err)
		}
	}
}

// FuzzTransformers5Llama: any tokenizer.json and tokenizer_config.json
// give an error, "not BPE", or a tokenizer.json that is JSON with the
// rebuilt pipeline.
func FuzzTransformers5Llama(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]},"normalizer":{"type":"Prepend","prepend":"▁"}}`), []byte(`{"legacy":true}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{},"merges":null}}`), []byte(`{"add_prefix_space":false}`))
	f.Add([]byte(`{"model":{"type":"Unigram","vocab":[]}}`), []byte(``))
	f.Add([]byte(`{"model":7}`), []byte(`{"legacy":"x"}`))
	f.Add([]byte(`[]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, tokJSON, cfg []byte) {
		out, ok, err := transformers5Llama(tokJSON, cfg)
		if err != nil || !ok {
			return
		}
		var file struct {
			Normalizer   json.RawMessage `json:"normalizer"`
			PreTokenizer struct {
				Type string `json:"type"`
			} `json:"pre_tokenizer"`
			Model struct {
				Type string `json:"type"`
			} `json:"model"`
		}
		if err := json.Unmarshal(out, &file); err != nil {
			t.Fatalf("rebuilt file is not JSON: %v\n%s", err, out)
		}
		if string(file.Normalizer) != "null" || file.PreTokenizer.Type != "Metaspace" || file.Model.Type != "BPE" {
			t.Fatalf("rebuilt pipeline: %s", out)
		}
	})
}
