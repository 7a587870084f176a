package records

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoLogic keeps records a data package: besides the standard
// library it may import only the codec and the value types of the marker and the endpoint, never
// the packages that compute what the records hold (budget, probe, ...).
func TestImportsNoLogic(t *testing.T) {
	allowed := map[string]bool{
		"github.com/islkit/islkit/internal/jsonl":     true,
		"github.com/islkit/islkit/internal/cachebust": true,
		"github.com/islkit/islkit/internal/endpoint":  true, // the endpoint kind, a value type like the marker target
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, ".") && !allowed[path] {
				t.Errorf("%s imports %s: records holds data only; move the type here or the logic out", f, path)
			}
		}
	}
}
