package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContextAndCorpusWarnings: --isl above the context length is a usage
// error unless --allow-over-context (issue 11, item 9); a one-word corpus
// and unreachable turns are said on stderr, with exit 0 (item 14).
func TestContextAndCorpusWarnings(t *testing.T) {
	p := probeLine(t)
	if code, out, errs := runCLI(p, "--isl", "1000000000000"); code != 2 || out != "" || !strings.Contains(errs, "at most") {
		t.Errorf("--isl 1e12: exit %d, stderr %q", code, errs)
	}
	if code, out, errs := runCLI(p, "--isl", "131073", "--conversations", "1"); code != 2 || out != "" || !strings.Contains(errs, "--allow-over-context") {
		t.Errorf("--isl 131073: exit %d, stderr %q", code, errs)
	}
	word := filepath.Join(t.TempDir(), "word.txt")
	os.WriteFile(word, []byte("\ufeffwhale\n"), 0o644)
	code, out, errs := runCLI(p, "--isl", "5", "--conversations", "2", "--corpus", word, "--workers", "1")
	if code != 0 || strings.Count(out, "\n") != 2 || strings.Contains(out, `\ufeff`) || strings.Contains(out, "\ufeff") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "compose: warning: the corpus is") {
		t.Errorf("stderr %q, want the short-corpus warning", errs)
	}
	code, _, errs = runCLI(p, "--isl", "1", "--conversations", "2", "--workers", "1")
	if code != 0 || !strings.Contains(errs, "compose: warning: 2 of 2 turn(s) are unreachable") {
		t.Errorf("--isl 1: exit %d, stderr %q, want the unreachable warning", code, errs)
	}
}

// TestZeroNowRefused: --now at the zero time would silently read the clock
// (issue 11, item 16).
func TestZeroNowRefused(t *testing.T) {
	if code, out, errs := runCLI(probeLine(t), "--isl", "10", "--now", "0001-01-01T00:00:00"); code != 2 || out != "" || !strings.Contains(errs, "zero time") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a usage error", code, out, errs)
	}
}
