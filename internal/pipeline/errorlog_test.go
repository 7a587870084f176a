package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestErrorLogCapsRepeatedErrors: a file of 500 bad lines shows the first
// 20 errors and then how many more there were, not 500 lines of stderr
// (issue 11, item 13).
func TestErrorLogCapsRepeatedErrors(t *testing.T) {
	var b strings.Builder
	log := NewErrorLog(&b, "measure")
	for i := 1; i <= 500; i++ {
		log.Report(fmt.Errorf("in.jsonl:%d: bad", i))
	}
	log.Close()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != MaxErrors+1 || lines[0] != "measure: in.jsonl:1: bad" || lines[MaxErrors-1] != "measure: in.jsonl:20: bad" {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	if want := "measure: ... and 480 more line error(s) not shown"; lines[MaxErrors] != want {
		t.Errorf("last line %q, want %q", lines[MaxErrors], want)
	}
	// Under the cap, every error and nothing more.
	b.Reset()
	log = NewErrorLog(&b, "measure")
	log.Report(errors.New("one"))
	log.Close()
	if b.String() != "measure: one\n" {
		t.Errorf("got %q", b.String())
	}
}
