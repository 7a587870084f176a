package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/jsonl"
	islmodel "github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/testutil"
)

// A Llama-class model loaded for --server vllm (built as transformers 5
// builds it) is recorded so: the probe record's tokenizer.build and the
// conversations' composed_for.tokenizer_build, both in their schemas.
func TestTransformers5BuildMatchesSchemas(t *testing.T) {
	stderr := modelsrc.Stderr
	modelsrc.Stderr = io.Discard
	t.Cleanup(func() { modelsrc.Stderr = stderr })
	src, err := modelsrc.Resolve(testutil.RefModel(t, "mistral7b"))
	if err != nil {
		t.Fatal(err)
	}
	islmodel.AsServer(src, "vllm")
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnPrefix, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Tokenizer.Build != modelsrc.Transformers5Llama {
		t.Fatalf("probe record's tokenizer.build %q", p.Tokenizer.Build)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "probe.schema.json", data)
	m, err := compose.LoadModelWith(p, islmodel.Options{Server: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := compose.New(p, m, "", compose.Options{ISL: 120, OSL: 20, Conversations: 1, Turns: 2, Seed: 3, Exact: true, Workers: 1, ISLSet: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := c.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	line := bytes.TrimSpace(buf.Bytes())
	if !strings.Contains(string(line), `"tokenizer_build":"transformers5-llama"`) {
		t.Fatalf("no tokenizer_build in %s", line)
	}
	testutil.ValidateSchema(t, "conversation.schema.json", line)
}
