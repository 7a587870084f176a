// Package testutil holds helpers that tests across islkit share.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, found by walking up from
// the test's working directory (the package folder under `go test`).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}
