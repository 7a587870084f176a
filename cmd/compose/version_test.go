package main

import (
	"testing"

	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/version"
)

// TestVersionFlag: --version prints the tool and its version and exits 0
// (issue 11 item 20). It needs no --isl.
func TestVersionFlag(t *testing.T) {
	testutil.CheckVersionFlag(t, "compose", "--version", version.Full(), run)
}
