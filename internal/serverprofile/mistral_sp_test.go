package serverprofile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
)

// TestMistralSentencePieceMatchesVLLM: over mistral-common's shipped
// SentencePiece models (the v2, v3 and v7 instruct tokenizers, each alone
// in a folder as tokenizer.model.vN), every corpus body counts and encodes as
// vLLM 0.32.0's own MistralTokenizer does
// (testdata/mistral-sp-expect.jsonl.gz, mistral-ref.py --sentencepiece);
// the bodies it refuses are refused. tokenizer.model.v1 (version v1) is
// refused as not reproduced.
func TestMistralSentencePieceMatchesVLLM(t *testing.T) {
	type expect struct {
		File    string          `json:"sentencepiece"`
		Version string          `json:"version"`
		Name    string          `json:"name"`
		Body    json.RawMessage `json:"body"`
		Count   int             `json:"count"`
		IDs     []int           `json:"ids"`
		Error   string          `json:"error"`
	}
	all := testutil.ReadJSONL[expect](t, filepath.Join("testdata", "mistral-sp-expect.jsonl.gz"))
	byVersion := map[string][]expect{}
	for _, c := range all[1:] {
		byVersion[c.Version] = append(byVersion[c.Version], c)
	}
	if len(byVersion) != 4 {
		t.Fatalf("%d versions, want v1, v2, v3 and v7", len(byVersion))
	}
	for v, cs := range byVersion {
		t.Run(v, func(t *testing.T) {
			data := testutil.ZstdFile(t, filepath.Join("..", "tokenizer", "testdata", "ranks", "sp_"+v+".model.zst"))
			tok, err := tokenizer.FromSentencePiece(data)
			if err != nil {
				t.Fatal(err)
			}
			special, err := tokenizer.SentencePieceSpecials(data)
			if err != nil {
				t.Fatal(err)
			}
			tmpl := &chat.Template{Mistral: &chat.MistralFormat{Version: v, Special: special}}
			ok := 0
			for _, c := range cs {
				ex, err := extract.Body(c.Body)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				pr, err := Render(VLLM, ex, tmpl, time.Time{}, nil)
				if v == "v1" {
					// InstructTokenizerV1 ([INST] as text): not reproduced,
					// refused by name.
					if !IsRefusal(err) || !strings.Contains(err.Error(), "v1 is not reproduced") {
						t.Fatalf("%s: v1: %v, want a refusal", c.Name, err)
					}
					ok++
					continue
				}
				if c.Error != "" {
					if err == nil || !IsRefusal(err) {
						t.Errorf("%s: vLLM refuses it (%s); got %v", c.Name, c.Error, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				ok++
				if ids := pr.IDs(tok); !slices.Equal(ids, c.IDs) {
					t.Errorf("%s: ids differ\n go:  %v\n ref: %v\n text: %q", c.Name, ids, c.IDs, pr.Text)
				} else if n := pr.Count(tok); n != c.Count {
					t.Errorf("%s: count %d, vLLM %d", c.Name, n, c.Count)
				}
			}
			if ok < 100 {
				t.Errorf("%d bodies counted, want at least 100", ok)
			}
		})
	}
}
