package send

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/workload"
)

// liveDataset is a ShareGPT file of n dialogs of 4 user turns, each with
// a reply, every other one with a system prompt: texts of 12 to 60 words
// of the corpus, so that turns are both cut and continued at --isl 60.
func liveDataset(t testing.TB, n int) []workload.Dialog {
	t.Helper()
	text, err := corpus.Default()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(text)
	at := 1000
	take := func(k int) string {
		s := strings.Join(words[at:at+k], " ")
		at += k
		return s
	}
	type msg struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	var data []map[string][]msg
	for i := range n {
		var c []msg
		if i%2 == 1 {
			c = append(c, msg{"system", take(15)})
		}
		for k := range 4 {
			c = append(c, msg{"human", take(12 + (i*7+k*13)%49)}, msg{"gpt", take(8 + (i+k)%20)})
		}
		data = append(data, map[string][]msg{"conversations": c})
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	dialogs, skipped, _, err := workload.ReadDataset(bytes.NewReader(raw), "live.json", "")
	if err != nil || len(skipped) != 0 || len(dialogs) != n {
		t.Fatalf("%d dialogs, %v skipped, %v", len(dialogs), skipped, err)
	}
	return dialogs
}

// composeLiveDataset is probe | compose --dataset --live (with --isl
// when isl > 0).
func composeLiveDataset(t testing.TB, name string, target cachebust.Target, dialogs []workload.Dialog, isl int) []records.Conversation {
	t.Helper()
	p, m := probeModel(t, name, endpoint.Chat, target)
	d, err := compose.NewDataset(p, m, compose.DatasetOptions{OSL: 16, Seed: 3, BenchmarkID: testutil.SeedBenchmarkID(3), Model: "m", Workers: 1, ISL: isl, Live: true})
	if err != nil {
		t.Fatal(err)
	}
	convs := composedRecords(t, func(ctx context.Context, w *jsonl.Writer) error { return d.Run(ctx, w, dialogs) })
	if len(convs) != len(dialogs) {
		t.Fatalf("%d conversations of %d dialogs (skipped: %v)", len(convs), len(dialogs), d.Skipped())
	}
	for _, c := range convs {
		if c.ComposedFor == nil {
			t.Fatalf("conversation %s: no composed_for", c.ID)
		}
		for _, turn := range c.Turns {
			if turn.Reserve == "" || turn.Unreachable != nil {
				t.Fatalf("conversation %s turn %d: reserve %q, unreachable %+v", c.ID, turn.Index, turn.Reserve, turn.Unreachable)
			}
		}
	}
	return convs
}

// TestExactLiveDataset: a dataset composed with --live, its texts resized
// to --isl 60 or kept as they are, sent with --exact to a server whose
// replies stop at random lengths (shorter than the dataset's, which set
// max_tokens): every request of the 4-turn dialogs counts exactly its
// target by the server's usage, for every cache-bust target, with and
// without a system prompt, on Qwen3 and Llama 3 (whose template trims each
// message). Some turns must have grown into their reserve (the replies
// were shorter than the dataset's).
func TestExactLiveDataset(t *testing.T) {
	dialogs := liveDataset(t, 6)
	for _, name := range []string{"", "llama3"} {
		for _, isl := range []int{60, 0} {
			for _, target := range cachebust.Targets() {
				t.Run(fmt.Sprintf("%s/isl=%d/%s", name, isl, target), func(t *testing.T) {
					convs := composeLiveDataset(t, name, target, dialogs, isl)
					recs, _ := runExactEndpoint(t, name, endpoint.Chat, convs, true, Config{Concurrency: 3})
					if len(recs) != 24 {
						t.Fatalf("%d records, want 24", len(recs))
					}
					checkExact(t, endpoint.Chat, recs)
					grown := 0
					for _, r := range recs {
						if r.ResizedFrom != nil && *r.ResizedTo > *r.ResizedFrom {
							grown++
						}
					}
					if grown == 0 {
						t.Error("no request grew into its reserve: the replies were never shorter than the dataset's")
					}
				})
			}
		}
	}
}
