// Command refdir prints the folder of the unpacked conformance reference
// tree (models/, golden/, templates/, reference/), unpacking it first when
// needed, for the scripts that compare islkit with the reference libraries:
//
//	REF=$(go run ./internal/testutil/refdir)
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/islkit/islkit/internal/testutil"
)

func main() {
	root, err := os.Getwd()
	if err == nil {
		root, err = findRoot(root)
	}
	if err == nil {
		var dir string
		if dir, err = testutil.UnpackConformance(root); err == nil {
			fmt.Println(dir)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "refdir:", err)
	os.Exit(1)
}

func findRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above %s", dir)
		}
		dir = parent
	}
}
