package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/version"
)

// TestVersionFlag: --version prints the tool and its version, without
// the required --isl (issue 11 item 20), and exits 0.
func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--version"}, strings.NewReader(""), &out, &errb)
	if want := "compose " + version.Full() + "\n"; code != 0 || out.String() != want {
		t.Errorf("exit %d, out %q, stderr %q; want 0 and %q", code, out.String(), errb.String(), want)
	}
}
