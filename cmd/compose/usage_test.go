package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsExit2 (#27 item 18): a --corpus that is not UTF-8 or
// holds no text, a --cache-bust other than the probe's, another tool's
// output given as --dataset and a --tokenizer that names nothing are bad
// flags: refused before any output with exit status 2 (they were 1).
func TestUsageErrorsExit2(t *testing.T) {
	p := probeLine(t)
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	binary := write("bin.txt", "\xff\xfe not text")
	blank := write("blank.txt", "\n\n  \n")
	convs := write("convs.jsonl", `{"kind":"islkit.conversation","schema_version":1,"id":"conv-0","turns":[]}`+"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--isl", "50", "--corpus", binary}, "not UTF-8 text"},
		{[]string{"--isl", "50", "--corpus", blank}, "no text"},
		{[]string{"--isl", "50", "--cache-bust", "none"}, "disagrees with the probe record"},
		{[]string{"--dataset", convs}, "this is compose's output"},
		{[]string{"--isl", "50", "--tokenizer", filepath.Join(dir, "nothing")}, "no such file or folder"},
	} {
		code, out, errs := runCLI(p, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %d bytes out, stderr %q; want 2 and %q", tc.args, code, len(out), errs, tc.want)
		}
	}
}
