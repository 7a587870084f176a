package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureMistralSGLang: measure --server sglang over a Mistral-format
// folder (tekken.json only) counts every chat body of the SGLang Mistral
// corpus as SGLang 0.5.23's own _process_messages does with the
// MistralCommonTokenizer its get_tokenizer loads
// (internal/serverprofile/testdata/mistral-sglang-expect.jsonl.gz,
// scripts/renderers/mistral-sglang-ref.py), for tokenizer v3 and v7; a
// body SGLang refuses fails its line, naming the rule.
func TestMeasureMistralSGLang(t *testing.T) {
	_, all := rendererExpectations(t, "mistral-sglang-expect.jsonl.gz")
	byConfig := map[[2]string][]rendererExpect{}
	for _, c := range all {
		byConfig[[2]string{c.Tekken, c.Version}] = append(byConfig[[2]string{c.Tekken, c.Version}], c)
	}
	for _, k := range [][2]string{{"tekken_240911", "v3"}, {"tekken_240911", "v7"}} {
		var cases []rendererExpect
		var in, refused strings.Builder
		nRefused := 0
		for _, c := range byConfig[k] {
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
		if len(cases) < 100 || nRefused < 20 {
			t.Fatalf("%v: %d bodies counted and %d refused in the corpus", k, len(cases), nRefused)
		}
		dir := testutil.TekkenFolder(t, k[0], k[1])
		code, out, errs := runCLI(in.String(), "--tokenizer", dir, "--server", "sglang", "--apply-chat-template", "--workers", "1")
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", k, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(cases) {
			t.Fatalf("%v: %d records out, %d in: %s", k, len(lines), len(cases), errs)
		}
		for i, l := range lines {
			var r struct {
				Tokens  *int   `json:"tokens"`
				Counted string `json:"counted"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			c := cases[i]
			if r.Tokens == nil || *r.Tokens != c.Count || r.Counted != "templated" {
				t.Errorf("%v %s: %s, SGLang %d", k, c.Name, l, c.Count)
			}
		}
		code, _, errs = runCLI(refused.String(), "--tokenizer", dir, "--server", "sglang", "--apply-chat-template", "--workers", "1")
		// measure shows the first 20 failed lines and counts them all.
		if code != 1 || strings.Count(errs, "sglang would refuse this request: mistral:") != min(nRefused, 20) || !strings.Contains(errs, fmt.Sprintf(" %d line(s) failed", nRefused)) {
			t.Errorf("%v: the %d bodies SGLang refuses: exit %d, %s", k, nRefused, code, errs)
		}
	}
}
