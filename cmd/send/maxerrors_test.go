package main

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
)

// TestMaxConsecutiveErrors: a server that fails every request stops the
// run after N failures in a row; every request sent is recorded (issue 11
// item 20).
func TestMaxConsecutiveErrors(t *testing.T) {
	in := writeInput(t, convLine)
	for _, conc := range []string{"1", "4"} {
		s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
		code, out, errs := runCLI("--url", s.URL(), "-H", testserver.FaultHeader+"=500", "--requests", "100", "--recycle",
			"--concurrency", conc, "--max-consecutive-errors", "5", in)
		n := strings.Count(out, "\n")
		if code != 1 || n < 5 || n != s.Requests() || n >= 100 || !strings.Contains(errs, "5 consecutive") {
			t.Errorf("concurrency %s: exit %d, %d records, server saw %d, stderr %q", conc, code, n, s.Requests(), errs)
		}
		if conc == "1" && n != 5 {
			t.Errorf("concurrency 1: %d records, want 5", n)
		}
	}
	if code, _, errs := runCLI("--url", "http://127.0.0.1:1", "--max-consecutive-errors", "-1", in); code != 2 || !strings.Contains(errs, "--max-consecutive-errors") {
		t.Errorf("negative: exit %d, %q", code, errs)
	}
}
