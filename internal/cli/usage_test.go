package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestOnlyWith: a flag given while its mode is off is refused as a usage
// error (exit 2) that names the flag, the mode and why; a flag not given,
// or its mode on, passes.
func TestOnlyWith(t *testing.T) {
	given := map[string]bool{"rate": true}
	err := OnlyWith(given, false, "to a live run", "drop it or --dry-run", "requests", "rate")
	if err == nil || err.Error() != "--rate applies to a live run only: drop it or --dry-run" || !IsUsage(err) {
		t.Fatalf("%v", err)
	}
	if err := OnlyWith(given, false, "with --exact", "", "tokenizer"); err != nil {
		t.Errorf("a flag not given: %v", err)
	}
	if err := OnlyWith(given, true, "to a live run", "", "rate"); err != nil {
		t.Errorf("mode on: %v", err)
	}
	if err := OnlyWith(given, false, "with --exact", "", "rate"); err == nil || err.Error() != "--rate applies with --exact only" {
		t.Errorf("no why: %v", err)
	}
	var stderr bytes.Buffer
	if code := Fail(&stderr, "tool", fmt.Errorf("input: %w", err)); code != ExitUsage {
		t.Errorf("a wrapped usage error exits %d, want 2", code)
	}
}

// TestUsage: Usage marks any error as a usage error once, nil stays nil.
func TestUsage(t *testing.T) {
	if Usage(nil) != nil || IsUsage(errors.New("x")) || !IsUsage(Usage(errors.New("x"))) {
		t.Fatal("Usage / IsUsage")
	}
	u := Usagef("bad")
	if Usage(u) != u {
		t.Error("Usage wraps a usage error again")
	}
}
