// Command refdir prints the folder of the unpacked conformance reference
// tree (models/, golden/, templates/, reference/), unpacking it first when
// needed, for the scripts that compare islkit with the reference libraries:
//
//	REF=$(go run ./internal/testutil/refdir)
package main

import (
	"fmt"
	"os"

	"github.com/islkit/islkit/internal/testutil"
)

func main() {
	root, err := testutil.FindRoot()
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
