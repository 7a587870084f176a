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
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// composeDataset composes testdata/sharegpt.json for a reference model as
// scripts/check-trace-reference.sh does (isl 0: texts kept).
func composeDataset(t *testing.T, model string, target cachebust.Target, isl int) (*Dataset, []records.Conversation) {
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
	d, err := NewDataset(p, m, DatasetOptions{OSL: 50, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 2, Model: "m", CacheBlockSize: 16, ISL: isl})
	if err != nil {
		t.Fatal(err)
	}
	return d, runDataset(t, d, dialogs)
}

// runDataset runs d over dialogs and reads its conversations back, each
// checked against the schema.
func runDataset(t *testing.T, d *Dataset, dialogs []workload.Dialog) []records.Conversation {
	t.Helper()
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := d.Run(context.Background(), w, dialogs); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var convs []records.Conversation
	for l := range strings.Lines(buf.String()) {
		testutil.ValidateSchema(t, "conversation.schema.json", []byte(l))
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs
}

// TestDatasetKeepsTexts: the dataset's texts and replies are kept as they
// are, max_tokens is the reply's length (else --osl), and every request
// records the count of the request send builds.
func TestDatasetKeepsTexts(t *testing.T) {
	d, convs := composeDataset(t, "", cachebust.FirstTurnPrefix, 0)
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
			w, _, err := d.wireIDs(&c, k, wire.Marker(&c, 0))
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
	ISL            int // 0: texts kept, else compose --isl
	Conv, Turn     int
	TargetISL      int    `json:"target_isl"`
	Unreachable    bool   `json:"unreachable"`
	MessagesSHA256 string `json:"messages_sha256"`
	RefTokens      *int   `json:"ref_tokens"`
	Refused, Error string
}

// TestDatasetReference recomposes testdata/sharegpt.json for every model
// and target of the reference check, texts kept and resized with --isl 30
// (texts cut; below some templates' own cost) and --isl 300 (texts
// continued), and requires the very requests the reference counted (same
// message hash), each counting exactly compose's wire_isl by the
// reference; resized, that count is the target_isl the reference run
// recorded, or above it for a turn marked unreachable.
func TestDatasetReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 63 datasets on 7 real models")
	}
	type key struct {
		model, target string
		isl           int
	}
	cases := map[key][]datasetRef{}
	var order []key
	for _, r := range testutil.ReadJSONL[datasetRef](t, filepath.Join("testdata", "dataset_reference.jsonl.gz")) {
		k := key{r.Model, r.Target, r.ISL}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if len(order) != len(traceModels)*3*3 {
		t.Fatalf("%d cases, want %d", len(order), len(traceModels)*3*3)
	}
	unreachable := 0
	for _, k := range order {
		t.Run(k.model+"/"+k.target+"/"+itoa(k.isl), func(t *testing.T) {
			rows := cases[k]
			if rows[0].Refused != "" {
				t.Fatalf("the reference run was refused: %s", rows[0].Refused)
			}
			target, _ := cachebust.ParseTarget(k.target)
			_, convs := composeDataset(t, k.model, target, k.isl)
			byReq := map[[2]int]*records.Turn{}
			msgs := map[[2]int]string{}
			for ci := range convs {
				c := &convs[ci]
				for ti := range c.Turns {
					req, err := wire.Build(c, ti, wire.Marker(c, 0), nil)
					if err != nil {
						t.Fatal(err)
					}
					byReq[[2]int{c.Index, ti}] = &c.Turns[ti]
					msgs[[2]int{c.Index, ti}] = messagesSHA256(req.Messages)
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
				case k.isl == 0:
				case turn.TargetISL != r.TargetISL || (turn.Unreachable != nil) != r.Unreachable:
					t.Errorf("conv %d turn %d: target %d unreachable %v, the reference run's %d %v", r.Conv, r.Turn, turn.TargetISL, turn.Unreachable != nil, r.TargetISL, r.Unreachable)
				case turn.Unreachable == nil && *r.RefTokens != r.TargetISL:
					t.Errorf("conv %d turn %d: the reference counts %d, target %d", r.Conv, r.Turn, *r.RefTokens, r.TargetISL)
				case turn.Unreachable != nil && (*r.RefTokens <= r.TargetISL || turn.Unreachable.MinISL != *r.RefTokens):
					t.Errorf("conv %d turn %d: unreachable %+v, the reference counts %d for target %d", r.Conv, r.Turn, *turn.Unreachable, *r.RefTokens, r.TargetISL)
				}
				if turn != nil && turn.Unreachable != nil {
					unreachable++
				}
			}
		})
	}
	if unreachable == 0 {
		t.Error("no turn is unreachable: --isl 30 should be below some template's own cost")
	}
}

// resizeDataset composes testdata/sharegpt.json on the embedded model
// with opts (Seed 1, OSL 50 unless set) and returns the output and dialogs.
func resizeDataset(t *testing.T, opts DatasetOptions) (*Dataset, string, []workload.Dialog) {
	t.Helper()
	p, m := realProbe(t, "", cachebust.FirstTurnSuffix)
	f, err := os.Open(filepath.Join("testdata", "sharegpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dialogs, _, _, err := workload.ReadDataset(f, "sharegpt.json", "")
	if err != nil {
		t.Fatal(err)
	}
	opts.Seed, opts.OSL, opts.BenchmarkID = 1, 50, testutil.SeedBenchmarkID(1)
	d, err := NewDataset(p, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := d.Run(context.Background(), w, dialogs); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return d, buf.String(), dialogs
}

func decodeConvs(t *testing.T, out string) []records.Conversation {
	t.Helper()
	var convs []records.Conversation
	for l := range strings.Lines(out) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs
}

// TestDatasetResize: with --isl every user turn is cut (a prefix of its
// own text) or continued (its own text first), every request counts
// exactly its target, and the targets follow compose's multi-turn
// definition: turn 0 --isl (+ one wrap + the system prompt), turn k turn
// k−1's + one wrap + the dataset reply + --isl; the replies stay the
// history and max_tokens their length. Output does not depend on workers.
func TestDatasetResize(t *testing.T) {
	for _, isl := range []int{30, 300} {
		d, out, dialogs := resizeDataset(t, DatasetOptions{ISL: isl, Workers: 1, CacheBlockSize: 16})
		if _, again, _ := resizeDataset(t, DatasetOptions{ISL: isl, Workers: 4, CacheBlockSize: 16}); again != out {
			t.Errorf("isl %d: output differs with 4 workers", isl)
		}
		tok, wrap := d.model.Tokenizer, d.probe.Overhead.Wrap
		convs := decodeConvs(t, out)
		if len(convs) != 3 {
			t.Fatalf("%d conversations, want 3 (one dialog skipped)", len(convs))
		}
		cut := 0
		for ci, c := range convs {
			dl := dialogs[ci]
			line, _ := json.Marshal(c)
			testutil.ValidateSchema(t, "conversation.schema.json", line)
			want := 0
			for k, turn := range c.Turns {
				own := dl.Turns[k].User
				if k == 0 {
					want = isl
					if dl.System != nil {
						want += wrap + tok.Count(*dl.System)
					}
				} else {
					want += wrap + tok.Count(*dl.Turns[k-1].Reply) + isl
				}
				ids, _, err := d.wireIDs(&c, k, wire.Marker(&c, 0))
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case turn.TargetISL != want:
					t.Errorf("isl %d %s turn %d: target %d, want %d", isl, c.ID, k, turn.TargetISL, want)
				case turn.Unreachable != nil || turn.WireISL == nil || *turn.WireISL != want || len(ids) != want:
					t.Errorf("isl %d %s turn %d: wire_isl %v, request %d tokens, unreachable %v; want %d", isl, c.ID, k, turn.WireISL, len(ids), turn.Unreachable, want)
				case isl == 300 && !strings.HasPrefix(turn.Text, own):
					t.Errorf("isl 300 %s turn %d: %q does not continue %q", c.ID, k, turn.Text, own)
				case isl == 30 && !strings.HasPrefix(own, strings.Fields(turn.Text)[0]):
					t.Errorf("isl 30 %s turn %d: %q does not open with %q's text", c.ID, k, turn.Text, own)
				case turn.BareTokens != tok.Count(turn.Text) || turn.CacheBlocks == "":
					t.Errorf("isl %d %s turn %d: bare_tokens %d for %q, cache_blocks %q", isl, c.ID, k, turn.BareTokens, turn.Text, turn.CacheBlocks)
				}
				if !strings.HasPrefix(own, turn.Text) && strings.HasPrefix(own, strings.Fields(turn.Text)[0]) && !strings.HasPrefix(turn.Text, own) {
					cut++
				}
				if r := dl.Turns[k].Reply; r != nil && (turn.Assistant != *r || turn.MaxTokens != tok.Count(*r)) {
					t.Errorf("isl %d %s turn %d: reply %q max_tokens %d, want the dataset's", isl, c.ID, k, turn.Assistant, turn.MaxTokens)
				}
			}
		}
		if isl == 30 && cut == 0 {
			t.Error("isl 30: no turn was cut")
		}
	}
}

// TestDatasetResizeUnreachable: a target below what the template and
// marker alone cost is marked unreachable with the request's real count
// and warned about, never silently missed.
func TestDatasetResizeUnreachable(t *testing.T) {
	d, out, _ := resizeDataset(t, DatasetOptions{ISL: 3, Workers: 2})
	n, unr := 0, 0
	for _, c := range decodeConvs(t, out) {
		for _, turn := range c.Turns {
			if turn.Unreachable != nil {
				unr++
			}
		}
		turn := c.Turns[0]
		ids, _, err := d.wireIDs(&c, 0, wire.Marker(&c, 0))
		if err != nil {
			t.Fatal(err)
		}
		u := turn.Unreachable
		if u == nil || u.MinISL != len(ids) || *turn.WireISL != len(ids) || u.Short != len(ids)-turn.TargetISL || len(ids) <= turn.TargetISL || turn.BareTokens != 1 {
			t.Errorf("%s: unreachable %+v, wire %v, the request counts %d for target %d", c.ID, u, turn.WireISL, len(ids), turn.TargetISL)
		}
		n += len(c.Turns)
	}
	if w := d.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], itoa(unr)+" of "+itoa(n)+" turn(s) are unreachable") {
		t.Errorf("warnings %q", w)
	}
}

// TestDatasetResizeSpread: --isl-stddev draws each user turn's ISL, the
// same for the same seed.
func TestDatasetResizeSpread(t *testing.T) {
	_, out, _ := resizeDataset(t, DatasetOptions{ISL: 200, ISLStddev: 50, Workers: 2})
	_, again, _ := resizeDataset(t, DatasetOptions{ISL: 200, ISLStddev: 50, Workers: 1})
	if out != again {
		t.Error("the same seed gives other output")
	}
	firsts := map[int]bool{}
	for _, c := range decodeConvs(t, out) {
		for _, turn := range c.Turns {
			if turn.Unreachable != nil || *turn.WireISL != turn.TargetISL {
				t.Errorf("%s: wire %v target %d", c.ID, turn.WireISL, turn.TargetISL)
			}
		}
		if c.SystemPrompt == nil {
			firsts[c.Turns[0].TargetISL] = true
		}
	}
	if len(firsts) < 2 || firsts[200] {
		t.Errorf("first targets %v: want drawn around 200", firsts)
	}
}

// TestDatasetResizeOverContext: an --isl above the model's context length
// is refused unless --allow-over-context, as for synthetic conversations.
func TestDatasetResizeOverContext(t *testing.T) {
	p, m := realProbe(t, "", cachebust.None)
	ctx := ContextLength(m.Source)
	if ctx == 0 {
		t.Fatal("the embedded model states no context length")
	}
	if _, err := NewDataset(p, m, DatasetOptions{OSL: 1, ISL: ctx + 1}); !cli.IsUsage(err) || !strings.Contains(err.Error(), "context length") {
		t.Errorf("--isl %d: %v, want a usage error naming the context length", ctx+1, err)
	}
	if _, err := NewDataset(p, m, DatasetOptions{OSL: 1, ISL: ctx + 1, AllowOverContext: true}); err != nil {
		t.Errorf("--allow-over-context: %v", err)
	}
	if _, err := NewDataset(p, m, DatasetOptions{OSL: 1, ISLStddev: 3}); !cli.IsUsage(err) {
		t.Errorf("--isl-stddev without --isl: %v", err)
	}
}
