//go:build ignore

// modzip extracts a Go module zip (as `go mod download -json` lists it) into
// a folder: `go run scripts/modzip.go ZIP DIR`. It exists so scripts need
// only Go, not unzip. Files are written below DIR without the zip's
// "module@version/" prefix; a path that would leave DIR is refused.
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/modzip.go ZIP DIR")
		os.Exit(2)
	}
	if err := extract(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func extract(zipPath, dir string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		// Drop the "module/path@version/" prefix every name starts with.
		at := strings.Index(f.Name, "@")
		_, rel, ok := strings.Cut(f.Name[at+1:], "/")
		if at < 0 || !ok || rel == "" || strings.HasSuffix(f.Name, "/") {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("%s: path leaves %s", f.Name, dir)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := write(f, dst); err != nil {
			return err
		}
	}
	return nil
}

func write(f *zip.File, dst string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
