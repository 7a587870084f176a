package main

import (
	"strings"
	"testing"
)

// TestHelpStatesDefaultsAndExitCodes (issue 11 item 20).
func TestHelpStatesDefaultsAndExitCodes(t *testing.T) {
	code, raw, _ := runCLI("--help")
	out := strings.Join(strings.Fields(raw), " ") // help wraps lines
	for _, want := range []string{"(default: 10m)", "(default: 30s)", "(default: max_tokens)", "Exit status", "130"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, help lacks %q:\n%s", code, want, out)
		}
	}
}
