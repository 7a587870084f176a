package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureMistral: measure --server vllm over a Mistral-format folder
// (tekken.json only) counts every chat body of the Mistral corpus as vLLM's own
// MistralTokenizer does (internal/serverprofile/testdata/mistral-expect.jsonl.gz,
// scripts/renderers/mistral-ref.py), the mistral renderer chosen by the folder,
// for tokenizer v3 and v7; a body vLLM refuses fails its line.
func TestMeasureMistral(t *testing.T) {
	checkMistralCorpus(t, "mistral-expect.jsonl.gz", "vllm", 1)
}

// checkMistralCorpus runs measure --server server over the Tekken bodies
// of an expectation file, for tekken_240911 as v3 and v7: every counted
// body's count equals the reference's, and every body the server refuses
// (at least minRefused) fails its line naming the mistral rule.
func checkMistralCorpus(t *testing.T, file, server string, minRefused int) {
	t.Helper()
	_, all := rendererExpectations(t, file)
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
		if len(cases) < 100 || nRefused < minRefused {
			t.Fatalf("%v: %d bodies counted and %d refused in the corpus", k, len(cases), nRefused)
		}
		dir := testutil.TekkenFolder(t, k[0], k[1])
		code, out, errs := runCLI(in.String(), "--tokenizer", dir, "--server", server, "--apply-chat-template", "--workers", "1")
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
				t.Errorf("%v body %d (%s): %s, %s %d", k, i+1, c.Name, l, server, c.Count)
			}
		}
		code, _, errs = runCLI(refused.String(), "--tokenizer", dir, "--server", server, "--apply-chat-template", "--workers", "1")
		// measure shows the first 20 failed lines and counts them all.
		if code != 1 || strings.Count(errs, server+" would refuse this request: mistral:") != min(nRefused, 20) || !strings.Contains(errs, fmt.Sprintf(" %d line(s) failed", nRefused)) {
			t.Errorf("%v: the %d bodies %s refuses: exit %d, %s", k, nRefused, server, code, errs)
		}
	}
}

// TestMeasureTokenizerModeMistral: a Mistral repo ships a tokenizer.json
// beside tekken.json; vLLM's --tokenizer-mode mistral reads tekken.json
// and encodes with mistral-common. measure --tokenizer-mode mistral does
// the same: over such a folder (tekken_240911 as v7, with the embedded
// model's tokenizer.json beside it) every chat body counts as vLLM's
// MistralTokenizer does (mistral-ref.py); the default mode reads
// tokenizer.json and counts otherwise.
func TestMeasureTokenizerModeMistral(t *testing.T) {
	_, all := rendererExpectations(t, "mistral-expect.jsonl.gz")
	var in strings.Builder
	var want []int
	for _, c := range all {
		if c.Tekken == "tekken_240911" && c.Version == "v7" && c.Error == "" {
			in.Write(c.Body)
			in.WriteByte('\n')
			want = append(want, c.Count)
		}
	}
	dir := testutil.TekkenFolder(t, "tekken_240911", "v7")
	tj, err := os.ReadFile(filepath.Join(testutil.RefModel(t, "qwen3"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(args ...string) []int {
		t.Helper()
		code, out, errs := runCLI(in.String(), append([]string{"--tokenizer", dir, "--server", "vllm", "--apply-chat-template", "--workers", "1"}, args...)...)
		if code != 0 && len(args) > 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var got []int
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				Tokens *int `json:"tokens"`
				ISL    struct {
					Renderer string `json:"renderer"`
				} `json:"isl"`
			}
			if json.Unmarshal([]byte(l), &r) == nil && r.Tokens != nil {
				got = append(got, *r.Tokens)
			}
		}
		return got
	}
	if got := count("--tokenizer-mode", "mistral"); !slices.Equal(got, want) {
		t.Errorf("--tokenizer-mode mistral: %v\nvLLM: %v", got, want)
	}
	if got := count(); slices.Equal(got, want) {
		t.Errorf("the default mode read tekken.json beside a tokenizer.json")
	}
	if code, _, errs := runCLI("", "--tokenizer", dir, "--tokenizer-mode", "mistral", "--apply-chat-template", "--renderer", "harmony"); code != 2 || !strings.Contains(errs, "--tokenizer-mode mistral") {
		t.Errorf("--renderer harmony with --tokenizer-mode mistral: exit %d, %s", code, errs)
	}
}

// TestMeasureMistralSentencePiece: measure --server vllm over a folder
// holding one of mistral-common's SentencePiece models (the v2 instruct
// tokenizer as tokenizer.model.v2) counts every corpus body as vLLM's
// MistralTokenizer does (mistral-sp-expect.jsonl.gz, mistral-ref.py
// --sentencepiece), the mistral renderer chosen by the folder.
func TestMeasureMistralSentencePiece(t *testing.T) {
	cases := testutil.ReadJSONL[struct {
		Version string          `json:"version"`
		Body    json.RawMessage `json:"body"`
		Count   int             `json:"count"`
		Error   string          `json:"error"`
	}](t, filepath.Join("..", "..", "internal", "serverprofile", "testdata", "mistral-sp-expect.jsonl.gz"))
	var in strings.Builder
	var want []int
	for _, c := range cases[1:] {
		if c.Version == "v2" && c.Error == "" {
			in.Write(c.Body)
			in.WriteByte('\n')
			want = append(want, c.Count)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.model.v2"), testutil.ZstdFile(t, filepath.Join("..", "..", "internal", "tokenizer", "testdata", "ranks", "sp_v2.model.zst")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(in.String(), "--tokenizer", dir, "--server", "vllm", "--apply-chat-template", "--workers", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Tokens *int `json:"tokens"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Tokens == nil {
			t.Fatalf("%s: %v", l, err)
		}
		got = append(got, *r.Tokens)
	}
	if len(want) < 100 || !slices.Equal(got, want) {
		t.Errorf("%d bodies: %v\nvLLM: %v", len(want), got, want)
	}
}
