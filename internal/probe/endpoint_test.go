package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// bosAdded is the special tokens each reference model's tokenizer.json
// post-processor adds to one sequence, read from the files: a
// TemplateProcessing (alone, or in a Sequence) whose "single" is [<s>, $A]
// or [<|begin_of_text|>, $A] adds one; ByteLevel alone adds none.
var bosAdded = map[string]int{
	"": 0, "llama3": 0, "llama3_1": 1, "deepseek_v3": 0, "gptoss": 0, "mistral7b": 1, "mistral7b-metaspace": 1,
}

// For completions there is no template: the fixed cost is the special
// tokens vLLM's encode(prompt, add_special_tokens=true) adds.
func TestCompletionsOverhead(t *testing.T) {
	for name, want := range bosAdded {
		rec, err := Run(Options{Source: testmodel.Source(t, name), CacheBust: cachebust.FirstTurnSuffix, Endpoint: endpoint.Completions})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Endpoint != endpoint.Completions || rec.Overhead.Fixed != want || rec.Overhead.Wrap != 0 || rec.Overhead.Samples != nil ||
			!strings.Contains(rec.Overhead.Reason, "no chat template") {
			t.Errorf("%q: %+v (endpoint %q), want per_request_fixed %d", name, rec.Overhead, rec.Endpoint, want)
		}
		if rec.MarkerTokens == 0 {
			t.Errorf("%q: no marker cost", name)
		}
	}
	_, err := Run(Options{Source: testmodel.Source(t, ""), ApplyChatTemplate: true, CacheBust: cachebust.None, Endpoint: endpoint.Completions})
	if err == nil || !strings.Contains(err.Error(), "never applies a chat template") {
		t.Errorf("completions with the template: %v", err)
	}
}

var pinned = time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)

// Responses renders as chat and vLLM encodes the render with special
// tokens: every probe render counts them once more, so each sample's
// fixed cost grows by exactly that many and the wrap stays.
func TestResponsesOverhead(t *testing.T) {
	for _, name := range []string{"", "mistral7b", "llama3_1"} {
		src := testmodel.Source(t, name)
		chatRec, err := Run(Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.None, Now: pinned})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := Run(Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.None, Now: pinned, Endpoint: endpoint.Responses})
		if err != nil {
			t.Fatal(err)
		}
		if chatRec.Endpoint != endpoint.Chat || resp.Endpoint != endpoint.Responses || len(resp.Overhead.Samples) != len(chatRec.Overhead.Samples) {
			t.Fatalf("%q: endpoints %q %q", name, chatRec.Endpoint, resp.Endpoint)
		}
		for i, s := range resp.Overhead.Samples {
			c := chatRec.Overhead.Samples[i]
			if s.Single != c.Single+bosAdded[name] || s.Triple != c.Triple+bosAdded[name] || s.Wrap != c.Wrap || s.Fixed != c.Fixed+float64(bosAdded[name]) {
				t.Errorf("%q sample %d: responses %+v, chat %+v, special tokens %d", name, i, s, c, bosAdded[name])
			}
		}
	}
}
