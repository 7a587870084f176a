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
	in := open(t, path)
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
	data, err := io.ReadAll(open(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

// open opens a test file for reading, gunzipped when its name ends in .gz;
// the test closes it.
func open(t testing.TB, path string) io.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !strings.HasSuffix(path, ".gz") {
		return f
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return zr
}
