package compose

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/workload"
)

// decodeAll decodes compose output.
func decodeAll(t *testing.T, out []byte) []records.Conversation {
	t.Helper()
	var convs []records.Conversation
	for l := range bytes.Lines(out) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: l}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs
}

// TestTraceRowsOverContext (#27 item 16): trace rows whose input_length
// (read from the file here) is above the model's context length are left
// out by default and kept with --over-context keep, each noted with its
// line, tokens and the context length. The context length is lowered to
// 400 tokens so that the testdata trace has rows above it.
func TestTraceRowsOverContext(t *testing.T) {
	p, m := realProbe(t, "", cachebust.FirstTurnSuffix)
	f, err := os.Open(filepath.Join("testdata", "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _, err := workload.ReadMooncake(f, "trace.jsonl", 128)
	if err != nil {
		t.Fatal(err)
	}
	const ctx = 400
	var above []int // lines
	var aboveLen []int
	for _, r := range rows {
		if r.InputLength > ctx {
			above, aboveLen = append(above, r.Line), append(aboveLen, r.InputLength)
		}
	}
	if len(above) == 0 || len(above) == len(rows) {
		t.Fatalf("the trace should have rows on both sides of %d tokens", ctx)
	}
	for _, mode := range []OverContext{"", OverContextKeep} {
		tr, err := NewTracer(p, m, "", TraceOptions{BlockSize: 128, Seed: 1, Workers: 2, OverContext: mode})
		if err != nil {
			t.Fatal(err)
		}
		tr.over.context = ctx
		var buf bytes.Buffer
		w := jsonl.NewWriter(&buf)
		if err := tr.Run(context.Background(), w, rows); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		convs := decodeAll(t, buf.Bytes())
		want := len(rows) - len(above)
		if mode == OverContextKeep {
			want = len(rows)
		}
		if len(convs) != want {
			t.Errorf("%q: %d conversations, want %d", mode, len(convs), want)
		}
		for _, c := range convs {
			if mode != OverContextKeep && c.Turns[0].TargetISL > ctx {
				t.Errorf("%q: row %d of %d tokens composed", mode, c.Trace.Line, c.Turns[0].TargetISL)
			}
		}
		over := tr.OverContext()
		if len(over) != len(above) {
			t.Fatalf("%q: noted %+v, want lines %v", mode, over, above)
		}
		for i, o := range over {
			done := "skipped"
			if mode == OverContextKeep {
				done = "kept"
			}
			prefix := fmt.Sprintf("turn 0's request is %d tokens, above the model's context length %d (model_max_length of %s): %s", aboveLen[i], ctx, m.Source.Name, done)
			if o.Line != above[i] || !strings.HasPrefix(o.Reason, prefix) {
				t.Errorf("%q: noted line %d %q, want line %d %q", mode, o.Line, o.Reason, above[i], prefix)
			}
		}
	}
	if _, err := NewTracer(p, m, "", TraceOptions{BlockSize: 128, OverContext: "drop"}); !cli.IsUsage(err) {
		t.Errorf("--over-context drop: %v, want a usage error", err)
	}
}

// TestDatasetDialogsOverContext (#27 item 16): a dialog one of whose
// requests is above the context length is left out by default (kept with
// keep), noted once at its first such turn with the request's tokens; the
// numbers are the requests' counts of a run without the limit.
func TestDatasetDialogsOverContext(t *testing.T) {
	run := func(ctx int, mode OverContext) (*Dataset, []records.Conversation) {
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
		d, err := NewDataset(p, m, DatasetOptions{OSL: 50, Seed: 1, BenchmarkID: "b", Workers: 2, OverContext: mode})
		if err != nil {
			t.Fatal(err)
		}
		d.over.context = ctx
		var buf bytes.Buffer
		w := jsonl.NewWriter(&buf)
		if err := d.Run(context.Background(), w, dialogs); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		return d, decodeAll(t, buf.Bytes())
	}
	_, all := run(0, "")
	// The limit between the largest and the smallest request.
	lo, hi := 1<<30, 0
	for _, c := range all {
		for _, turn := range c.Turns {
			lo, hi = min(lo, *turn.WireISL), max(hi, *turn.WireISL)
		}
	}
	ctx := (lo + hi) / 2
	type note struct{ turn, tokens int }
	wantNotes := map[int]note{} // by dialog index
	for _, c := range all {
		for k, turn := range c.Turns {
			if *turn.WireISL > ctx {
				wantNotes[c.Index] = note{k, *turn.WireISL}
				break
			}
		}
	}
	if len(wantNotes) == 0 || len(wantNotes) == len(all) {
		t.Fatalf("want dialogs on both sides of %d tokens", ctx)
	}
	for _, mode := range []OverContext{OverContextSkip, OverContextKeep} {
		d, convs := run(ctx, mode)
		kept := map[int]bool{}
		for _, c := range convs {
			kept[c.Index] = true
		}
		for _, c := range all {
			_, over := wantNotes[c.Index]
			if kept[c.Index] != (!over || mode == OverContextKeep) {
				t.Errorf("%s: dialog %d (over %v) kept %v", mode, c.Index, over, kept[c.Index])
			}
		}
		notes := d.OverContext()
		if len(notes) != len(wantNotes) {
			t.Fatalf("%s: notes %+v, want %d", mode, notes, len(wantNotes))
		}
		for _, n := range notes {
			found := false
			for _, w := range wantNotes {
				if strings.HasPrefix(n.Reason, fmt.Sprintf("turn %d's request is %d tokens, above the model's context length %d ", w.turn, w.tokens, ctx)) {
					found = true
				}
			}
			if !found || !strings.Contains(n.Reason, map[OverContext]string{OverContextSkip: ": skipped", OverContextKeep: ": kept"}[mode]) {
				t.Errorf("%s: note line %d %q, want one of %+v", mode, n.Line, n.Reason, wantNotes)
			}
		}
	}
}
