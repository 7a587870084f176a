package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// benchCase is the request BenchmarkRender and bench_python.sh both render:
// the "tools_gp" line of each model's wire golden file (system + user
// messages, tools, generation prompt).
const benchCase = "tools_gp"

func BenchmarkRender(b *testing.B) {
	shared := testutil.RefDir(b)
	for _, model := range []string{"llama3", "qwen3", "gptoss"} {
		b.Run(model, func(b *testing.B) {
			tmpl, err := LoadFS(os.DirFS(filepath.Join(shared, "models", model)), "")
			if err != nil {
				b.Fatal(err)
			}
			var in RenderInput
			var msgs json.RawMessage
			for _, c := range testutil.ReadJSONL[testutil.WireCase](b, filepath.Join(shared, "golden", "wire", model+".jsonl")) {
				if c.Case == benchCase {
					in = RenderInput{Tools: c.Tools, AddGenerationPrompt: true, FlattenContent: true, Now: testutil.WireNow}
					msgs = c.Messages
				}
			}
			if msgs == nil {
				b.Fatalf("no %s case for %s", benchCase, model)
			}
			// Decode once, as Python's benchmark receives decoded objects.
			if in.Messages, err = DecodeJSON(msgs); err != nil {
				b.Fatal(err)
			}
			if in.Tools, err = DecodeJSON(c0(in.Tools)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tmpl.Render(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
		})
	}
}

func c0(v any) json.RawMessage { return v.(json.RawMessage) }
