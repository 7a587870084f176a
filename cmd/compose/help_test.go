package main

import (
	"strings"
	"testing"
)

// TestHelpStatesDefaultsAndExitCodes (issue 11 item 20).
func TestHelpStatesDefaultsAndExitCodes(t *testing.T) {
	code, raw, _ := runCLI("", "--help")
	out := strings.Join(strings.Fields(raw), " ") // help wraps lines
	if code != 0 || !strings.Contains(out, "(default: 128)") || !strings.Contains(out, "Exit status") || !strings.Contains(out, "130") {
		t.Errorf("exit %d, help:\n%s\nwant --osl's default 128 and the exit codes", code, out)
	}
}
