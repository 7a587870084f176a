package testutil

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/jsonl"
)

// ReadJSONL decodes every line of a JSONL file (golden files, test cases;
// gzipped when the name ends in .gz) into a T, through the same reader and
// decoder the tools use; a bad or unreadable line fails the test with its
// file, line and field.
func ReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		in = zr
	}
	r := jsonl.NewReader(in, path)
	var out []T
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var v T
		if err := line.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
}

// ReadFile returns a file's bytes, gunzipped when its name ends in .gz.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		in = zr
	}
	data, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}
