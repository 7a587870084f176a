package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestLiveFlag: --live adds a reserve per turn (composed_for is on every
// conversation, with --live or not) (records
// valid against the schema) and is refused with --exact=false and --trace
// (single-turn requests, exact as composed).
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
	if code != 0 || strings.Count(out, `"composed_for":{`) != 2 || strings.Contains(out, `"reserve"`) {
		t.Errorf("without --live: exit %d\n%s", code, out)
	}
	trace := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "trace.jsonl")
	for _, args := range [][]string{
		{"--isl", "50", "--live", "--exact=false"},
		{"--trace", trace, "--live"},
	} {
		if code, _, errs := runCLI(p, args...); code != 2 || !strings.Contains(errs, "--live") {
			t.Errorf("%v: exit %d, %q; want 2 naming --live", args, code, errs)
		}
	}
}

// TestDatasetLive: compose --dataset --live writes composed_for and a
// reserve on every turn, with --isl and without; every other field,
// composed_for included (written by every run), is what it is without
// --live.
func TestDatasetLive(t *testing.T) {
	p := probeLine(t)
	data := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "sharegpt.json")
	for _, extra := range [][]string{{"--isl", "80"}, nil} {
		args := append([]string{"--dataset", data, "--model", "m", "--workers", "1", "--benchmark-id", "b1"}, extra...)
		code, plain, errs := runCLI(p, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		code, live, errs := runCLI(p, append(args, "--live")...)
		if code != 0 {
			t.Fatalf("%v --live: exit %d %s", args, code, errs)
		}
		plainLines, liveLines := strings.Split(strings.TrimSpace(plain), "\n"), strings.Split(strings.TrimSpace(live), "\n")
		if len(plainLines) != 3 || len(liveLines) != 3 {
			t.Fatalf("%v: %d and %d conversations, want 3", args, len(plainLines), len(liveLines))
		}
		for i, l := range liveLines {
			testutil.ValidateSchema(t, "conversation.schema.json", []byte(l))
			var c map[string]any
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatal(err)
			}
			if c["composed_for"] == nil {
				t.Errorf("%v: conversation %d has no composed_for", args, i)
			}
			for _, turn := range c["turns"].([]any) {
				tm := turn.(map[string]any)
				if r, _ := tm["reserve"].(string); r == "" {
					t.Errorf("%v: conversation %d turn %v has no reserve", args, i, tm["index"])
				}
				delete(tm, "reserve")
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(plainLines[i]), &want); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(c) != fmt.Sprint(want) {
				t.Errorf("%v: conversation %d differs from the one without --live beyond the reserve:\n%v\n%v", args, i, c, want)
			}
		}
	}
}
