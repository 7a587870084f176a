package testutil

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateSchema checks one JSON document against schemas/<name> of this
// repository (e.g. "probe.schema.json") and fails the test with the
// validator's explanation when it does not conform.
func ValidateSchema(t testing.TB, name string, doc []byte) {
	t.Helper()
	if err := SchemaError(t, name, doc); err != nil {
		t.Errorf("document does not match %s: %v\n%s", name, err, doc)
	}
}

// SchemaError is why doc does not conform to schemas/<name>, nil when it
// does: for tests that expect a document to be refused.
func SchemaError(t testing.TB, name string, doc []byte) error {
	t.Helper()
	path := filepath.Join(RepoRoot(t), "schemas", name)
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	return sch.Validate(v)
}
