package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// composeDataset composes testdata/sharegpt.json for a reference model.
func composeDataset(t *testing.T, model string, target cachebust.Target) (*Dataset, []records.Conversation) {
	t.Helper()
	p, m := realProbe(t, model, target)
	f, err := os.Open(filepath.Join("testdata", "sharegpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dialogs, skipped, _, err := workload.ReadDataset(f, "sharegpt.json", "")
	if err != nil || len(skipped) != 1 || skipped[0].Line != 3 || !strings.Contains(skipped[0].Reason, "(assistant) where a user turn belongs") {
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
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		testutil.ValidateSchema(t, "conversation.schema.json", line)
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

// datasetRef is one line of testdata/dataset_reference.jsonl.gz, written by
// scripts/check-trace-reference.sh --update: a request of compose
// --dataset | send --dry-run and the reference's count of it.
type datasetRef struct {
	Model, Target  string
	Conv, Turn     int
	MessagesSHA256 string `json:"messages_sha256"`
	RefTokens      *int   `json:"ref_tokens"`
	Refused, Error string
}

// TestDatasetReference recomposes testdata/sharegpt.json for every model
// and target of the reference check and requires the very requests the
// reference counted (same message hash), each counting exactly compose's
// wire_isl by the reference.
func TestDatasetReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 21 datasets on 7 real models")
	}
	type key struct{ model, target string }
	cases := map[key][]datasetRef{}
	var order []key
	for _, r := range testutil.ReadJSONL[datasetRef](t, filepath.Join("testdata", "dataset_reference.jsonl.gz")) {
		k := key{r.Model, r.Target}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if len(order) != len(traceModels)*3 {
		t.Fatalf("%d cases, want %d", len(order), len(traceModels)*3)
	}
	for _, k := range order {
		t.Run(k.model+"/"+k.target, func(t *testing.T) {
			rows := cases[k]
			if rows[0].Refused != "" {
				t.Fatalf("the reference run was refused: %s", rows[0].Refused)
			}
			target, _ := cachebust.ParseTarget(k.target)
			_, convs := composeDataset(t, k.model, target)
			byReq := map[[2]int]*records.Turn{}
			msgs := map[[2]int]string{}
			for ci := range convs {
				c := &convs[ci]
				for ti := range c.Turns {
					m, err := wire.Messages(c, ti, wire.Marker(c, 0), nil)
					if err != nil {
						t.Fatal(err)
					}
					byReq[[2]int{c.Index, ti}] = &c.Turns[ti]
					msgs[[2]int{c.Index, ti}] = messagesSHA256(m)
				}
			}
			if len(byReq) != len(rows) {
				t.Fatalf("%d requests, the reference counted %d", len(byReq), len(rows))
			}
			for _, r := range rows {
				id := [2]int{r.Conv, r.Turn}
				turn := byReq[id]
				switch {
				case turn == nil:
					t.Errorf("conv %d turn %d: not composed", r.Conv, r.Turn)
				case r.Error != "" || r.RefTokens == nil:
					t.Errorf("conv %d turn %d: the reference failed: %s", r.Conv, r.Turn, r.Error)
				case msgs[id] != r.MessagesSHA256:
					t.Errorf("conv %d turn %d: another request than the reference counted", r.Conv, r.Turn)
				case *turn.WireISL != *r.RefTokens:
					t.Errorf("conv %d turn %d: wire_isl %d, the reference counts %d", r.Conv, r.Turn, *turn.WireISL, *r.RefTokens)
				}
			}
		})
	}
}
