package jinja_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/islkit/islkit/internal/chat/internal/jinja"
)

// TestNetworkProvisioning compares the self-contained provisioning plan and
// its language features against Python Jinja2, without model request data.
//
// Ported from github.com/ardanlabs/jinja v1.12.0 (Apache License 2.0). The
// cases, once Go literals sent to Python at every run, are in
// testdata/provisioning/cases.json (numbers keep int vs float); Python's
// renders are in testdata/reference/provisioning.json.gz (make
// jinja-reference).
func TestNetworkProvisioning(t *testing.T) {
	data, err := os.ReadFile("testdata/provisioning/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name       string         `json:"name"`
		Source     string         `json:"source"`
		SourceFile string         `json:"source_file"`
		Data       map[string]any `json:"data"`
		WantErr    bool           `json:"want_error"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	for i := range cases {
		if cases[i].SourceFile != "" {
			src, err := os.ReadFile("testdata/provisioning/" + cases[i].SourceFile)
			if err != nil {
				t.Fatal(err)
			}
			cases[i].Source = string(src)
		}
	}
	var reference []struct {
		Output string `json:"output"`
		Error  string `json:"error"`
	}
	if err := readGzipJSON("testdata/reference/provisioning.json.gz", &reference); err != nil {
		t.Fatal(err)
	}
	if len(reference) != len(cases) {
		t.Fatalf("reference count: got %d, want %d (make jinja-reference)", len(reference), len(cases))
	}
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if (reference[i].Error != "") != tc.WantErr {
				t.Fatalf("Python: got error %q, want error %v", reference[i].Error, tc.WantErr)
			}
			tmpl, err := jinja.Compile(tc.Source)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			for range 2 {
				got, err := tmpl.Render(tc.Data)
				if (err != nil) != tc.WantErr {
					t.Fatalf("render: got error %v, want error %v", err, tc.WantErr)
				}
				if !tc.WantErr && got != reference[i].Output {
					t.Errorf("output differs from Python\n%s", diffSummary(got, reference[i].Output))
				}
			}
		})
	}
}
