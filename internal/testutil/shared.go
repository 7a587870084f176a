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

// SharedDir returns ../shared (the reference models and golden files beside
// the repository), or $ISLKIT_SHARED when set. When neither exists the test
// is skipped with a message saying so; set ISLKIT_REQUIRE_SHARED=1 (CI does)
// to turn that skip into a failure, so conformance cannot pass silently.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ISLKIT_SHARED")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "golden")); err != nil {
		msg := "reference files not found at " + dir + " (expected ../shared beside the repository, or $ISLKIT_SHARED)"
		if os.Getenv("ISLKIT_REQUIRE_SHARED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}
