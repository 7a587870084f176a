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

// TestDeepSeekV32OverHTTP: the test server serving a deepseek_v32 model
// (chosen by its config.json model_type) reports, for every rendered body
// of the DeepSeek-V3.2 corpus, the prompt_tokens of DeepSeek's encoder
// and the Python tokenizers package (internal/serverprofile/testdata,
// from scripts/renderers/deepseek-v32-ref.py).
func TestDeepSeekV32OverHTTP(t *testing.T) {
	f, err := os.Open("../serverprofile/testdata/deepseek-v32-expect.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	src, err := modelsrc.Resolve(testutil.DeepSeekV32Model(t))
	if err != nil {
		t.Fatal(err)
	}
	s := StartTest(t, Config{Model: src, Profile: serverprofile.VLLM})
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	n := 0
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		var c struct {
			Name  string                     `json:"name"`
			Body  map[string]json.RawMessage `json:"body"`
			Count int                        `json:"count"`
			Error string                     `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Error != "" {
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
			t.Errorf("%s: prompt_tokens %d, encoder %d", c.Name, resp.Usage.PromptTokens, c.Count)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("%d bodies", n)
	}
}
