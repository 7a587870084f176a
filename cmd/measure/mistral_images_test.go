package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureMistralImages: measure --server vllm over a Mistral-format
// folder whose tekken.json has image settings counts every chat body with
// images as vLLM's own MistralTokenizer does
// (internal/serverprofile/testdata/mistral-images-expect.jsonl.gz,
// scripts/renderers/mistral-images-ref.py): Pixtral-12B-2409's settings
// (tokenizer v3, as mistral-common ships tekken_240911.json) and Mistral
// Small 3.1's (v7); an image in an assistant or system message fails its
// line.
func TestMeasureMistralImages(t *testing.T) {
	type expect struct {
		rendererExpect
		Image json.RawMessage `json:"image"`
	}
	all := testutil.ReadJSONL[expect](t, filepath.Join("..", "..", "internal", "serverprofile", "testdata", "mistral-images-expect.jsonl.gz"))[1:]
	for _, version := range []string{"v3", "v7"} {
		var in, refused strings.Builder
		var cases []expect
		nRefused := 0
		for _, c := range all {
			if c.Version != version {
				continue
			}
			if c.Error != "" {
				refused.Write(c.Body)
				refused.WriteByte('\n')
				nRefused++
				continue
			}
			cases = append(cases, c)
			in.Write(c.Body)
			in.WriteByte('\n')
		}
		if len(cases) < 40 || nRefused == 0 {
			t.Fatalf("%s: %d bodies and %d refused in the corpus", version, len(cases), nRefused)
		}
		dir := testutil.TekkenFolder(t, "tekken_240911", version)
		if img := cases[0].Image; len(img) > 0 && string(img) != "null" {
			path := filepath.Join(dir, "tekken.json")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			i := strings.LastIndex(s, `"image": {`)
			if i < 0 {
				t.Fatal("tekken_240911: no image settings to replace")
			}
			if err := os.WriteFile(path, []byte(s[:i]+`"image": `+string(img)+"\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCLI(in.String(), "--tokenizer", dir, "--server", "vllm", "--apply-chat-template", "--workers", "1")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", version, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(cases) {
			t.Fatalf("%s: %d records out, %d in: %s", version, len(lines), len(cases), errs)
		}
		for i, l := range lines {
			var r struct {
				Tokens  *int   `json:"tokens"`
				Counted string `json:"counted"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Tokens == nil || *r.Tokens != cases[i].Count || r.Counted != "templated" {
				t.Errorf("%s %s: tokens %v (%s), vLLM %d", version, cases[i].Name, r.Tokens, r.Counted, cases[i].Count)
			}
		}
		code, _, errs = runCLI(refused.String(), "--tokenizer", dir, "--server", "vllm", "--apply-chat-template", "--workers", "1")
		if code != 1 || strings.Count(errs, "vllm would refuse this request") != nRefused {
			t.Errorf("%s: the %d bodies vLLM refuses: exit %d, %s", version, nRefused, code, errs)
		}
	}
}
