package main

import (
	"strings"
	"testing"
)

// TestHelpStatesDefaultsAndExitCodes (issue 11 item 20).
func TestHelpStatesDefaultsAndExitCodes(t *testing.T) {
	code, raw, _ := runCLI("--help")
	out := strings.Join(strings.Fields(raw), " ") // help wraps lines
	if code != 0 || !strings.Contains(out, "(default: 60s)") || !strings.Contains(out, "Exit status") {
		t.Errorf("exit %d, help:\n%s\nwant --timeout's default and the exit codes", code, out)
	}
}
