// Package testutil holds helpers that tests across islkit share.
package testutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the directory holding go.mod, found by walking up from
// the test's working directory (the package folder under `go test`).
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// FindRoot returns the directory holding go.mod above the working
// directory.
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// CheckVersionFlag runs a tool's run function with flag (--version) and
// checks it prints "tool <version>" and exits 0: the check the four tools
// share (issue 11 item 20).
func CheckVersionFlag(t *testing.T, tool, flag, version string, run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{flag}, strings.NewReader(""), &out, &errb)
	if want := tool + " " + version + "\n"; code != 0 || out.String() != want {
		t.Errorf("%s %s: exit %d, out %q, stderr %q; want 0 and %q", tool, flag, code, out.String(), errb.String(), want)
	}
}
