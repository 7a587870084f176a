package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// dsv32Renames are the deepseek_v3 tokenizer's added tokens that
// DeepSeek-V3.1 and V3.2 name <think> and </think> (ids 128798 and
// 128799); scripts/renderers/deepseek-v32-ref.py renames them the same
// way.
var dsv32Renames = [][2]string{{"<｜place▁holder▁no▁798｜>", "<think>"}, {"<｜place▁holder▁no▁799｜>", "</think>"}}

var dsv32 struct {
	once sync.Once
	dir  string
	err  error
}

// DeepSeekV32Model is a model folder standing in for DeepSeek-V3.2: the
// deepseek_v3 conformance tokenizer with V3.2's <think> and </think>
// tokens (the vocabulary as far as V3.2's encoder uses it) and a
// config.json of model_type deepseek_v32. Made once per test binary in
// the temporary folder.
func DeepSeekV32Model(t testing.TB) string {
	t.Helper()
	ref := RefModel(t, "deepseek_v3")
	dsv32.once.Do(func() {
		dsv32.dir, dsv32.err = makeDSV32(ref)
	})
	if dsv32.err != nil {
		t.Fatalf("deepseek_v32 stand-in: %v", dsv32.err)
	}
	return dsv32.dir
}

func makeDSV32(ref string) (string, error) {
	dir, err := os.MkdirTemp("", "islkit-dsv32-")
	if err != nil {
		return "", err
	}
	tok, err := os.ReadFile(filepath.Join(ref, "tokenizer.json"))
	if err != nil {
		return "", err
	}
	for _, r := range dsv32Renames {
		if bytes.Count(tok, []byte(r[0])) != 1 {
			return "", fmt.Errorf("%s: want %s once", ref, r[0])
		}
		tok = bytes.Replace(tok, []byte(r[0]), []byte(r[1]), 1)
	}
	cfg, err := os.ReadFile(filepath.Join(ref, "tokenizer_config.json"))
	if err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"tokenizer.json": tok, "tokenizer_config.json": cfg, "config.json": []byte(`{"model_type": "deepseek_v32"}` + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
