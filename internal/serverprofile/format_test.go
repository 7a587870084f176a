package serverprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/testutil"
)

// TestContentFormatDetection compares vLLM's and SGLang's content-format
// detection (§1.3, §5) on our Jinja AST with the reference's walk over
// Python Jinja2's AST, for the 71 shared templates and the synthetic ones
// in testdata/templates (aliases of messages, a namespace assignment, a
// tuple loop target, a macro parameter; vLLM 0.32's macro parameters bound
// to a message's content by keyword or position, and a loop over a
// variable named content).
func TestContentFormatDetection(t *testing.T) {
	type format struct {
		Template string `json:"template"`
		VLLM     string `json:"vllm"`
		SGLang   string `json:"sglang"`
	}
	want := testutil.ReadJSONL[format](t, filepath.Join("testdata", "formats.jsonl"))
	dirs := map[string]string{"shared": filepath.Join(testutil.RefDir(t), "templates"), "local": filepath.Join("testdata", "templates")}
	openai, differ := 0, 0
	for _, w := range want {
		label, name, _ := strings.Cut(w.Template, "/")
		src, err := os.ReadFile(filepath.Join(dirs[label], name+".jinja"))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := chat.Compile(string(src))
		if err != nil {
			t.Errorf("%s: %v", w.Template, err)
			continue
		}
		if got := tmpl.ContentFormat(chat.DetectVLLM, false); got != w.VLLM {
			t.Errorf("%s: vLLM detection %s, want %s", w.Template, got, w.VLLM)
		}
		if got := tmpl.ContentFormat(chat.DetectSGLang, false); got != w.SGLang {
			t.Errorf("%s: SGLang detection %s, want %s", w.Template, got, w.SGLang)
		}
		if w.VLLM == "openai" {
			openai++
		}
		if w.VLLM != w.SGLang {
			differ++
		}
	}
	if len(want) < 79 || openai < 10 || differ < 4 {
		t.Errorf("%d templates, %d openai, %d where vLLM and SGLang differ: the file lost cases", len(want), openai, differ)
	}
}
