package testserver

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

// TestMistralOverHTTP: the test server serving a Mistral-format folder
// (mistral-common's tekken_240911 as tokenizer v7) reports vLLM's own
// MistralTokenizer count (scripts/renderers/mistral-ref.py) as
// prompt_tokens on every corpus body it does not refuse.
func TestMistralOverHTTP(t *testing.T) {
	f, err := os.Open("../serverprofile/testdata/mistral-expect.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	src, err := modelsrc.Resolve(testutil.TekkenFolder(t, "tekken_240911", "v7"))
	if err != nil {
		t.Fatal(err)
	}
	s := StartTest(t, Config{Model: src, Profile: serverprofile.VLLM})
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			Tekken  string                     `json:"tekken"`
			Version string                     `json:"version"`
			Name    string                     `json:"name"`
			Body    map[string]json.RawMessage `json:"body"`
			Count   int                        `json:"count"`
			Error   string                     `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Tekken != "tekken_240911" || c.Version != "v7" || c.Error != "" {
			continue
		}
		c.Body["max_tokens"] = json.RawMessage("1")
		body, err := json.Marshal(c.Body)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		postJSON(t, s.URL(), string(body), nil, &resp)
		if resp.Usage.PromptTokens != c.Count {
			t.Errorf("%s: prompt_tokens %d, vLLM %d", c.Name, resp.Usage.PromptTokens, c.Count)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("%d bodies", n)
	}
}
