package testserver

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestHarmonyOverHTTP: the test server serving gpt-oss with Harmony
// reports, for every body of the Harmony corpus, the prompt_tokens the
// real openai_harmony renders (internal/serverprofile/testdata, from
// scripts/renderers/harmony-ref.py).
func TestHarmonyOverHTTP(t *testing.T) {
	f, err := os.Open("../serverprofile/testdata/harmony-expect.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	var s *Server
	n := 0
	for sc.Scan() {
		var c struct {
			Now   string                     `json:"now"`
			Name  string                     `json:"name"`
			Body  map[string]json.RawMessage `json:"body"`
			Count int                        `json:"count"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			now, err := time.Parse("2006-01-02", c.Now)
			if err != nil {
				t.Fatal(err)
			}
			s = StartTest(t, Config{Model: testmodel.Source(t, "gptoss"), Now: now, Profile: serverprofile.VLLM, Renderer: serverprofile.RendererHarmony})
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
			t.Errorf("%s: prompt_tokens %d, openai_harmony %d", c.Name, resp.Usage.PromptTokens, c.Count)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("%d bodies", n)
	}
}
