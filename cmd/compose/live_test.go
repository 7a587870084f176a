package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestLiveFlag: --live adds composed_for and a reserve per turn (records
// valid against the schema) and is refused with --exact=false, --trace and
// --dataset, whose texts send --exact does not resize.
func TestLiveFlag(t *testing.T) {
	p := probeLine(t)
	code, out, errs := runCLI(p, "--isl", "50", "--turns", "2", "--conversations", "2", "--live", "--workers", "1")
	if code != 0 || strings.Count(out, `"composed_for":{`) != 2 || strings.Count(out, `"reserve":"`) != 4 {
		t.Fatalf("--live: exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		testutil.ValidateSchema(t, "conversation.schema.json", []byte(l))
	}
	code, out, _ = runCLI(p, "--isl", "50", "--turns", "2", "--conversations", "2", "--workers", "1")
	if code != 0 || strings.Contains(out, `"composed_for"`) || strings.Contains(out, `"reserve"`) {
		t.Errorf("without --live: exit %d\n%s", code, out)
	}
	trace := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "trace.jsonl")
	for _, args := range [][]string{
		{"--isl", "50", "--live", "--exact=false"},
		{"--trace", trace, "--live"},
		{"--dataset", filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "sharegpt.json"), "--live"},
	} {
		if code, _, errs := runCLI(p, args...); code != 2 || !strings.Contains(errs, "--live") {
			t.Errorf("%v: exit %d, %q; want 2 naming --live", args, code, errs)
		}
	}
}
