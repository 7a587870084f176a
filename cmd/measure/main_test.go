package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCLI(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	// "Hello world" is [9707, 1879] for Qwen3 (HF tokenizers).
	code, out, errs := runCLI(`{"text":"Hello world"}`+"\n", "--ids")
	if code != 0 || !strings.Contains(out, `"tokens":2`) || !strings.Contains(out, `[9707,1879]`) {
		t.Errorf("measure: exit %d, out %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(`{"text":"a"}`+"\n"+`[1]`+"\n", "--workers", "1")
	if code != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "<stdin>:2") || !strings.Contains(errs, "1 line(s) failed") {
		t.Errorf("bad line: exit %d, out %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{
		{"--max-line-bytes", "0"},
		{"--workers", "0"},
		{"--plot", "x.png"},
		{"--now", "yesterday"},
		{"--bogus"},
	} {
		if code, out, errs := runCLI("", args...); code != 2 || out != "" || !strings.HasPrefix(errs, "measure: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	if code, out, _ := runCLI("", "--help"); code != 0 || !strings.Contains(out, "Usage: measure") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}
