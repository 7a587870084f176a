package main

import "testing"

// TestMeasureMistralSGLang: measure --server sglang over a Mistral-format
// folder (tekken.json only) counts every chat body of the SGLang Mistral
// corpus as SGLang 0.5.23's own _process_messages does with the
// MistralCommonTokenizer its get_tokenizer loads
// (internal/serverprofile/testdata/mistral-sglang-expect.jsonl.gz,
// scripts/renderers/mistral-sglang-ref.py), for tokenizer v3 and v7; a
// body SGLang refuses fails its line, naming the rule.
func TestMeasureMistralSGLang(t *testing.T) {
	checkMistralCorpus(t, "mistral-sglang-expect.jsonl.gz", "sglang", 20)
}
