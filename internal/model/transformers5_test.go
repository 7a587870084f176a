package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
)

// TestServerBuildsTokenizer asserts that --server vllm and sglang load a
// Llama-class folder's tokenizer as the transformers 5 of vLLM 0.32 and
// SGLang 0.5.23 builds it (huggingface/transformers#45488) and record it
// in the pin, that the other profiles read tokenizer.json as it is, that a pin with the build
// refuses a tool that would not build it, and that a pin without the
// field (older records) loads under either. The ids: transformers 5.19
// encodes "</s> Hello" as [2, 22557] (testdata/vllm/transformers5-ids.jsonl.gz,
// BOS left out); tokenizer.json's Prepend normalizer adds "▁" to " Hello",
// [2, 28705, 22557] (golden: " leading" is [28705, 5374]).
func TestServerBuildsTokenizer(t *testing.T) {
	dir := testutil.RefModel(t, "mistral7b")
	stderr := modelsrc.Stderr
	var warned strings.Builder
	modelsrc.Stderr = &warned
	t.Cleanup(func() { modelsrc.Stderr = stderr })
	for _, tc := range []struct {
		server, build string
		ids           []int
	}{
		{"vllm", modelsrc.Transformers5Llama, []int{2, 22557}},
		{"sglang", modelsrc.Transformers5Llama, []int{2, 22557}},
		{"transformers", "", []int{2, 28705, 22557}},
		{"", "", []int{2, 28705, 22557}},
	} {
		m, err := Load(Options{Tokenizer: dir, Server: tc.server})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Tokenizer.Encode("</s> Hello"); !slices.Equal(got, tc.ids) {
			t.Errorf("--server %q: %v, want %v", tc.server, got, tc.ids)
		}
		pin, err := m.Pin(false)
		if err != nil {
			t.Fatal(err)
		}
		if pin.TokenizerBuild != tc.build {
			t.Errorf("--server %q: pin's tokenizer_build %q, want %q", tc.server, pin.TokenizerBuild, tc.build)
		}
	}
	// One warning per load that builds it (vllm and sglang).
	if !strings.Contains(warned.String(), modelsrc.Transformers5Issue) || strings.Count(warned.String(), "\n") != 2 {
		t.Errorf("want two warnings naming %s, got %q", modelsrc.Transformers5Issue, warned.String())
	}
	vllm, err := Load(Options{Tokenizer: dir, Server: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := vllm.Pin(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPinned(pin, Options{Server: "vllm"}, "the records", "fix"); err != nil {
		t.Errorf("the pin's own build: %v", err)
	}
	_, err = LoadPinned(pin, Options{Server: "transformers"}, "the records", "fix")
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), modelsrc.Transformers5Llama) {
		t.Errorf("a transformers5-llama pin under transformers: %v, want a usage error naming the build", err)
	}
	old := pin
	old.TokenizerBuild = ""
	for _, server := range []string{"vllm", "transformers"} {
		if _, err := LoadPinned(old, Options{Server: server}, "the records", "fix"); err != nil {
			t.Errorf("a pin without tokenizer_build under %s: %v", server, err)
		}
	}
	sg, err := Load(Options{Tokenizer: dir, Server: "transformers"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := sg.Differs(pin, false); !strings.Contains(d, modelsrc.Transformers5Llama) || err != nil {
		t.Errorf("Differs of a plain load from a transformers5-llama pin: %q %v", d, err)
	}
}
