package serverprofile

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/modelsrc"
)

// BenchmarkPrepare is the vllm profile's preprocessing of a compose-like
// body (one user message of about 1000 tokens) alone: what it adds to
// measure's per-payload work (see measure's BenchmarkPayloads).
func BenchmarkPrepare(b *testing.B) {
	src, err := modelsrc.Default()
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100,
		"messages": []map[string]any{{"role": "user", "content": "[rid:0123456789ab]\n\n" + strings.Repeat("Call me Ishmael. ", 250)}}})
	ex, err := extract.Body(body)
	if err != nil {
		b.Fatal(err)
	}
	rules := RulesOf(VLLM)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Prepare(rules, ex, tmpl); err != nil {
			b.Fatal(err)
		}
	}
}
