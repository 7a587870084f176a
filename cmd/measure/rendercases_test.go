package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// rendererExpect is one line of a renderer's expectations
// (internal/serverprofile/testdata/*-expect.jsonl.gz, written by
// scripts/renderers/*-ref.py with the real library).
type rendererExpect struct {
	Name    string          `json:"name"`
	Now     string          `json:"now"`
	Tekken  string          `json:"tekken"`
	Version string          `json:"version"`
	Body    json.RawMessage `json:"body"`
	Count   int             `json:"count"`
	Error   string          `json:"error"` // the reference refused the body
}

// rendererExpectations reads file's header line and its bodies.
func rendererExpectations(t *testing.T, file string) (header rendererExpect, cases []rendererExpect) {
	t.Helper()
	all := testutil.ReadJSONL[rendererExpect](t, filepath.Join("..", "..", "internal", "serverprofile", "testdata", file))
	if len(all) < 2 || all[0].Body != nil {
		t.Fatalf("%s: want a header line, then the bodies", file)
	}
	return all[0], all[1:]
}
