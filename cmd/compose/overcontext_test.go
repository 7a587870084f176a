package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/testutil"
)

// smallContextProbe is the probe record of the embedded Qwen3 tokenizer in
// a folder whose tokenizer_config.json says model_max_length 400 (no chat
// template: counts are bare).
func smallContextProbe(t *testing.T) (probeLine, dir string) {
	t.Helper()
	dir = t.TempDir()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "modelsrc", "defaultmodel", "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"model_max_length": 400}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := probe.Run(probe.Options{Tokenizer: dir, CacheBust: cachebust.FirstTurnSuffix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n", dir
}

// TestOverContextFlag (#27 item 16): trace rows above the model's context
// length (rows 2 and 3 of a trace: 500 and 512 tokens, against 400) are warned about with file, line, tokens and context length, and
// left out (default) or kept (--over-context keep); the flag applies with
// --dataset or --trace only.
func TestOverContextFlag(t *testing.T) {
	p, dir := smallContextProbe(t)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	rows := `{"timestamp": 0, "input_length": 300, "output_length": 10, "hash_ids": [1, 2, 3]}
{"timestamp": 0, "input_length": 500, "output_length": 12, "hash_ids": [1, 2, 4, 5]}
{"timestamp": 3, "input_length": 512, "output_length": 8, "hash_ids": [1, 2, 3, 6]}
`
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		args := []string{"--trace", trace, "--block-size", "128", "--workers", "1"}
		done, lines := "skipped", 1
		if keep {
			args, done, lines = append(args, "--over-context", "keep"), "kept", 3
		}
		code, out, errs := runCLI(p, args...)
		if code != 0 || strings.Count(out, "\n") != lines {
			t.Fatalf("%v: exit %d, %d conversations (want %d), stderr %q", args, code, strings.Count(out, "\n"), lines, errs)
		}
		for _, want := range []string{
			"compose: warning: " + trace + ":2: turn 0's request is 500 tokens, above the model's context length 400 (model_max_length of " + dir + "): " + done,
			"compose: warning: " + trace + ":3: turn 0's request is 512 tokens, above the model's context length 400 (model_max_length of " + dir + "): " + done,
			"compose: warning: 2 of 3 trace row(s) above the model's context length, " + done,
		} {
			if !strings.Contains(errs, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, errs)
			}
		}
	}
	if code, _, errs := runCLI(p, "--isl", "50", "--over-context", "keep"); code != 2 || !strings.Contains(errs, "--over-context applies with --dataset or --trace only") {
		t.Errorf("--over-context without a workload: exit %d, %q", code, errs)
	}
}
