package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnoredFlagsRefused: --chat-template does nothing without
// --apply-chat-template (or --verify-url), and --now at the zero time
// would read the clock: both are usage errors (issue 11, item 16).
func TestIgnoredFlagsRefused(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	os.WriteFile(tmpl, []byte(`{% for m in messages %}{{ m.content }}{% endfor %}`), 0o644)
	for _, args := range [][]string{
		{"--chat-template", tmpl},
		{"--now", "0001-01-01T00:00:00"},
	} {
		if code, out, errs := runCLI(args...); code != 2 || out != "" || !strings.HasPrefix(errs, "probe: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI("--chat-template", tmpl, "--apply-chat-template"); code != 0 {
		t.Errorf("with --apply-chat-template: exit %d, %s", code, errs)
	}
}
