package main

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
)

// probeLine is the embedded model's probe record, as probe writes it.
func probeLine(t *testing.T) string {
	t.Helper()
	rec, err := probe.Run(probe.Options{CacheBust: cachebust.FirstTurnSuffix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func runCLI(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	p := probeLine(t)
	code, out, errs := runCLI(p, "--isl", "50", "--conversations", "3", "--workers", "1")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"kind":"islkit.conversation"`) {
		t.Errorf("compose: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	// A stddev needs its mean given on the command line, though --osl has
	// a default: kong's parse path tells them apart.
	if code, out, errs := runCLI(p, "--isl", "50", "--osl-stddev", "3"); code != 2 || out != "" || !strings.Contains(errs, "--osl") {
		t.Errorf("--osl-stddev without --osl: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(p, "--isl", "50", "--osl", "128", "--osl-stddev", "3", "--conversations", "1"); code != 0 {
		t.Errorf("--osl-stddev with --osl: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{
		{"--isl", "0"},
		{"--bogus"},
		{}, // --isl is required
		{"--isl", "50", "--workers", "0"},
		{"--isl", "50", "--cache-bust", "sideways"},
	} {
		if code, out, errs := runCLI(p, args...); code != 2 || out != "" || !strings.HasPrefix(errs, "compose: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	if code, out, _ := runCLI("", "--help"); code != 0 || !strings.Contains(out, "Usage: compose") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	if code, _, errs := runCLI("", "--isl", "50"); code != 1 || !strings.Contains(errs, "no probe record") {
		t.Errorf("no probe: exit %d, %q", code, errs)
	}
}
