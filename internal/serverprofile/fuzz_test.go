package serverprofile

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/modelsrc"
)

// FuzzPrepare feeds chat bodies (the reference cases and mutations) to
// every profile and to every mix of two profiles' rules (what Explain
// builds): no panic, and a body is either refused, fails to render, or
// renders to a count.
func FuzzPrepare(f *testing.F) {
	file, err := os.Open(filepath.Join("testdata", "cases.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Body json.RawMessage `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			f.Add([]byte(c.Body))
		}
	}
	file.Close()
	src, err := modelsrc.Default()
	if err != nil {
		f.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		f.Fatal(err)
	}
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil {
		f.Fatal(err)
	}
	profiles := []Profile{VLLM, SGLang, Transformers, AIPerf}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := extract.Body(body)
		if err != nil {
			return
		}
		for i, p := range profiles {
			r := RulesOf(p)
			// Half of the axes from the next profile: a mixed rule set.
			q := profiles[(i+1)%len(profiles)]
			for a := Axis(0); a < numAxes; a += 2 {
				r[a] = q
			}
			for _, rules := range []Rules{RulesOf(p), r} {
				req, err := Prepare(rules, ex, tmpl)
				if err != nil {
					continue
				}
				text, err := req.Append(tmpl, time.Time{}, nil)
				if err == nil && req.Count(tok, text) < 0 {
					t.Fatal("negative count")
				}
			}
		}
	})
}
