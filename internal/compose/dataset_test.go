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
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// composeDataset composes testdata/sharegpt.json for a reference model.
func composeDataset(t *testing.T, model string, target cachebust.Target) (*Dataset, []records.Conversation) {
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
	f, err := os.Open(filepath.Join("testdata", "sharegpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dialogs, skipped, _, err := workload.ReadDataset(f, "sharegpt.json", "")
	if err != nil || len(skipped) != 1 || skipped[0].Line != 3 {
		t.Fatalf("dataset: %v %v", skipped, err)
	}
	d, err := NewDataset(p, m, DatasetOptions{OSL: 50, Seed: 1, Workers: 2, Model: "m", CacheBlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := d.Run(context.Background(), w, dialogs); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var convs []records.Conversation
	for l := range strings.Lines(buf.String()) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return d, convs
}

// TestDatasetKeepsTexts: the dataset's texts and replies are kept as they
// are, max_tokens is the reply's length (else --osl), and every request
// records the count of the request send builds.
func TestDatasetKeepsTexts(t *testing.T) {
	d, convs := composeDataset(t, "", cachebust.FirstTurnPrefix)
	if len(convs) != 3 || len(convs[0].Turns) != 2 || convs[1].SystemPrompt == nil || convs[1].SystemPrompt.Text != "You answer in one short sentence." {
		t.Fatalf("conversations %+v", convs)
	}
	tok := d.model.Tokenizer
	if got := convs[2].Turns[0].Text; got != "Tell me about   spacing,\n\nnewlines\tand tabs — and ‘quotes’." {
		t.Errorf("text changed: %q", got)
	}
	if mt := convs[0].Turns[1].MaxTokens; mt != tok.Count("Ishmael, a sailor on the Pequod.") {
		t.Errorf("max_tokens %d, want the reply's length", mt)
	}
	if mt := convs[2].Turns[0].MaxTokens; mt != 50 {
		t.Errorf("max_tokens without a reply %d, want --osl 50", mt)
	}
	for _, c := range convs {
		for k, turn := range c.Turns {
			w, err := d.wireIDs(&c, k, wire.Marker(&c, 0))
			if err != nil {
				t.Fatal(err)
			}
			if turn.WireISL == nil || *turn.WireISL != len(w) || turn.TargetISL != len(w) || turn.CacheBlocks == "" {
				t.Errorf("%s turn %d: wire_isl %v target %d, the request counts %d", c.ID, k, turn.WireISL, turn.TargetISL, len(w))
			}
		}
	}
}
