package testserver

import (
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

// TestMistralImagesOverHTTP: the test server serving a Mistral-format
// model with image settings (tekken_240911 as mistral-common ships it:
// Pixtral-12B-2409's, tokenizer v3) reports, for every chat body with
// images of the Mistral images corpus, the prompt_tokens of vLLM 0.32.0's
// own MistralTokenizer (scripts/renderers/mistral-images-ref.py).
func TestMistralImagesOverHTTP(t *testing.T) {
	all := testutil.ReadJSONL[rendererCase](t, filepath.Join("..", "serverprofile", "testdata", "mistral-images-expect.jsonl.gz"))
	var cases []rendererCase
	for _, c := range all[1:] {
		if c.Version == "v3" && c.Error == "" {
			cases = append(cases, c)
		}
	}
	if len(cases) < 40 {
		t.Fatalf("%d bodies", len(cases))
	}
	dir := testutil.TekkenFolder(t, "tekken_240911", "v3")
	src, err := modelsrc.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	vis := serverprofile.LoadVision(dir, -1)
	servesCounts(t, StartTest(t, Config{Model: src, Profile: serverprofile.VLLM, Vision: vis}), cases, "vLLM")
}
