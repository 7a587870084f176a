package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/workload"
)

var traceModels = []string{"llama3", "llama3_1", "qwen3", "deepseek_v3", "gptoss", "mistral7b", "mistral7b-metaspace"}

// composeTrace composes testdata/trace.jsonl for a reference model.
func composeTrace(t *testing.T, model string, target cachebust.Target, block int) ([]records.Conversation, error) {
	t.Helper()
	src := testmodel.Source(t, model)
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinned})
	if err != nil {
		t.Fatal(err)
	}
	m, err := modelFor(p, src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, skipped, err := workload.ReadMooncake(f, "trace.jsonl", block)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("trace: %v %v", skipped, err)
	}
	tr, err := NewTracer(p, m, "", TraceOptions{BlockSize: block, Seed: 1, Workers: 2})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := tr.Run(context.Background(), w, rows); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var convs []records.Conversation
	for l := range strings.Lines(buf.String()) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs, nil
}

func TestTraceOwnCounts(t *testing.T) {
	for _, model := range traceModels {
		t.Run(model, func(t *testing.T) {
			convs, err := composeTrace(t, model, cachebust.FirstTurnSuffix, 128)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range convs {
				tu := c.Turns[0]
				t.Logf("line %d ids %v target %d wire %d full %d unreachable %v", c.Trace.Line, c.Trace.HashIDs, tu.TargetISL, *tu.WireISL, c.Trace.FullBlocks, tu.Unreachable != nil)
			}
		})
	}
}

func TestTraceRefusesPrefixTargets(t *testing.T) {
	for _, target := range []cachebust.Target{cachebust.FirstTurnPrefix, cachebust.SystemPrefix} {
		_, err := composeTrace(t, "", target, 128)
		if !IsUsage(err) || !strings.Contains(err.Error(), "before the blocks the trace says are shared") {
			t.Errorf("%s: %v", target, err)
		}
	}
}
