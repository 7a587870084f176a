package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/wire"
)

// refRow is one line of testdata/reference.jsonl, written by
// scripts/check-compose-reference.sh --update from the reference renderer
// and tokenizer (testdata/conformance/oracle).
type refRow struct {
	Model, Target  string
	ISL, System    int
	Conv, Turn     int
	MessagesSHA256 string `json:"messages_sha256"`
	RefTokens      *int   `json:"ref_tokens"`
	SystemRef      *int   `json:"system_ref_tokens"`
	SystemWant     int    `json:"system_want"`
	Refused        string `json:"refused"`
	Error          string `json:"error"`
}

type refCase struct {
	model, target string
	isl, system   int
}

// TestReferenceCounts recomposes every case of the reference check and
// requires the very requests the reference counted (same message hash)
// and compose's own count to equal the reference's: exactly --isl for a
// first request without system prompt, and the marked system prompt
// exactly its requested length.
func TestReferenceCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 140 cases on 7 real models")
	}
	cases := map[refCase][]refRow{}
	var order []refCase
	for _, r := range testutil.ReadJSONL[refRow](t, filepath.Join("testdata", "reference.jsonl")) {
		k := refCase{r.Model, r.Target, r.ISL, r.System}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if len(order) != 7*5*4 {
		t.Fatalf("%d cases in testdata, want 140 (7 models × 5 targets × 4)", len(order))
	}
	models := map[string]*Model{}
	for _, k := range order {
		t.Run(k.model+"/"+k.target+"/"+itoa(k.isl)+"/"+itoa(k.system), func(t *testing.T) {
			src := testmodel.Source(t, k.model)
			target, _ := cachebust.ParseTarget(k.target)
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinned})
			if err != nil {
				t.Fatal(err)
			}
			m := models[k.model]
			if m == nil {
				if m, err = modelFor(p, src, "", ""); err != nil {
					t.Fatal(err)
				}
				models[k.model] = m
			}
			c, err := New(p, m, "", Options{ISL: k.isl, OSL: 32, Conversations: 2, Turns: 2, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1),
				SharedSystemPromptLength: k.system, Exact: true, Workers: 2, ISLSet: true, OSLSet: true, TurnsSet: true})
			rows := cases[k]
			if rows[0].Refused != "" {
				if !cli.IsUsage(err) {
					t.Errorf("the reference run was refused (%s) but New gives %v", rows[0].Refused, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Error != "" {
					t.Fatalf("reference could not render: %s", r.Error)
				}
				conv, err := c.Conversation(r.Conv)
				if err != nil {
					t.Fatal(err)
				}
				if r.SystemRef != nil {
					if *r.SystemRef != r.SystemWant || r.SystemWant != k.system {
						t.Errorf("conv %d: reference counts the marked system prompt %d, want %d", r.Conv, *r.SystemRef, k.system)
					}
					continue
				}
				req, err := wire.Build(conv, r.Turn, wire.Marker(conv, 0), nil)
				if err != nil {
					t.Fatal(err)
				}
				if h := messagesHash(req.Messages); h != r.MessagesSHA256 {
					t.Fatalf("conv %d turn %d: request differs from the one the reference counted (regenerate with scripts/check-compose-reference.sh --update)", r.Conv, r.Turn)
				}
				turn := conv.Turns[r.Turn]
				ref := *r.RefTokens
				if turn.WireISL == nil || *turn.WireISL != ref {
					t.Errorf("conv %d turn %d: compose counts %v, reference %d", r.Conv, r.Turn, turn.WireISL, ref)
				}
				if turn.Unreachable == nil && ref != turn.TargetISL {
					t.Errorf("conv %d turn %d: reference %d, target %d", r.Conv, r.Turn, ref, turn.TargetISL)
				}
				if turn.Unreachable != nil && (turn.Unreachable.MinISL != ref || ref <= turn.TargetISL) {
					t.Errorf("conv %d turn %d: unreachable %+v but reference %d", r.Conv, r.Turn, turn.Unreachable, ref)
				}
				if r.Turn == 0 && k.system == 0 && turn.Unreachable == nil && ref != k.isl {
					t.Errorf("conv %d: first request counts %d by the reference, want --isl %d", r.Conv, ref, k.isl)
				}
			}
		})
	}
}

// messagesHash matches the script: SHA-256 over role NUL content NUL.
func messagesHash(msgs []request.Message) string {
	h := sha256.New()
	for _, m := range msgs {
		h.Write([]byte(m.Role + "\x00" + m.Content + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
