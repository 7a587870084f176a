// Package testmodel gives tests the reference models resolved once per
// test binary: parsing a real tokenizer.json (Qwen3's is 11 MB) costs more
// than most tests that use it, and a modelsrc.Source parses its tokenizer
// once however often it is asked.
package testmodel

import (
	"sync"
	"testing"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
)

var (
	mu      sync.Mutex
	sources = map[string]*modelsrc.Source{}
)

// Source returns the model source for a reference model by name (see
// testutil.RefModel), or the embedded default for "". Tests share the
// result: treat it as read-only.
func Source(t testing.TB, name string) *modelsrc.Source {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if src, ok := sources[name]; ok {
		return src
	}
	spec := ""
	if name != "" {
		spec = testutil.RefModel(t, name)
	}
	src, err := modelsrc.Resolve(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tokenizer(); err != nil {
		t.Fatal(err)
	}
	sources[name] = src
	return src
}
