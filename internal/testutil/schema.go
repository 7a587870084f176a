package testutil

import (
	"bytes"
	"path/filepath"
	"sync"
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
	sch := compiledSchema(t, name)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	return sch.Validate(v)
}

// schemas holds each compiled schema of this test binary: compiling one
// costs more than validating hundreds of documents against it.
var schemas sync.Map // name → *jsonschema.Schema

func compiledSchema(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	if sch, ok := schemas.Load(name); ok {
		return sch.(*jsonschema.Schema)
	}
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(RepoRoot(t), "schemas", name))
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	schemas.Store(name, sch)
	return sch
}
