package compose

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/wire"
)

// TestPrefixGroups: conversations of one group open with the same
// --prefix-length wire tokens, other groups with other tokens, and every
// request is still exact.
func TestPrefixGroups(t *testing.T) {
	for _, model := range []string{"", "llama3", "mistral7b-metaspace"} {
		src := testmodel.Source(t, model)
		p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnSuffix, Now: pinned})
		if err != nil {
			t.Fatal(err)
		}
		m, err := modelFor(p, src, "", "")
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(p, m, "", Options{ISL: 400, OSL: 16, Conversations: 7, Turns: 2, Seed: 3, BenchmarkID: testutil.SeedBenchmarkID(3), Exact: true, Workers: 2,
			PrefixGroups: 3, PrefixLength: 150, CacheBlockSize: 16, ISLSet: true})
		if err != nil {
			t.Fatal(err)
		}
		tr := &Tracer{model: m}
		first := map[int][]int{}
		for i := range 7 {
			conv, err := c.Conversation(i)
			if err != nil {
				t.Fatal(err)
			}
			if conv.PrefixGroup == nil || *conv.PrefixGroup != i%3 {
				t.Fatalf("%s conv %d: group %v", model, i, conv.PrefixGroup)
			}
			line, err := json.Marshal(conv)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidateSchema(t, "conversation.schema.json", line)
			if conv.CacheBlockSize != 16 || len(conv.Turns[0].CacheBlocks) != 400/16*16 {
				t.Errorf("%s conv %d: cache blocks %d hex digits of size %d, want 25 names", model, i, len(conv.Turns[0].CacheBlocks), conv.CacheBlockSize)
			}
			ids, err := tr.wireIDs(conv, wire.Marker(conv, 0))
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != 400 || *conv.Turns[0].WireISL != 400 || *conv.Turns[1].WireISL != conv.Turns[1].TargetISL {
				t.Errorf("%s conv %d: %d tokens, wire_isl %d/%d", model, i, len(ids), *conv.Turns[0].WireISL, *conv.Turns[1].WireISL)
			}
			g := *conv.PrefixGroup
			if prev, ok := first[g]; ok {
				if !slices.Equal(prev, ids[:150]) {
					t.Errorf("%s conv %d: first 150 tokens differ from its group's", model, i)
				}
			} else {
				first[g] = ids[:150]
			}
		}
		for a := range 3 {
			for b := a + 1; b < 3; b++ {
				if slices.Equal(first[a], first[b]) {
					t.Errorf("%s: groups %d and %d share their prefix", model, a, b)
				}
			}
		}
	}
	p, _ := probe.Run(probe.Options{CacheBust: cachebust.FirstTurnPrefix, ApplyChatTemplate: true})
	m, _ := LoadModel(p, "", "", "")
	if _, err := New(p, m, "", Options{ISL: 400, OSL: 16, Conversations: 1, Turns: 1, Exact: true, PrefixGroups: 2, PrefixLength: 100}); !cli.IsUsage(err) {
		t.Errorf("prefix target: %v", err)
	}
}

// prefixRef is one line of testdata/prefix_groups_reference.jsonl.gz,
// written by scripts/check-prefix-groups-reference.sh --update.
type prefixRef struct {
	Model, Target     string
	Conv, Turn, Group int
	TargetISL         int    `json:"target_isl"`
	MessagesSHA256    string `json:"messages_sha256"`
	RefTokens         int    `json:"ref_tokens"`
	PrefixSHA256      string `json:"prefix_sha256"`
	Error             string
}

// TestPrefixGroupsReference recomposes every case of the reference check
// and requires the very requests the reference encoded, each exactly its
// target by the reference, our first 200 token ids equal to the
// reference's, and by the reference one prefix per group, distinct groups
// distinct.
func TestPrefixGroupsReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 14 cases on 7 real models")
	}
	type key struct{ model, target string }
	cases := map[key][]prefixRef{}
	var order []key
	for _, r := range testutil.ReadJSONL[prefixRef](t, filepath.Join("testdata", "prefix_groups_reference.jsonl.gz")) {
		k := key{r.Model, r.Target}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if len(order) != len(traceModels)*2 {
		t.Fatalf("%d cases, want %d", len(order), len(traceModels)*2)
	}
	for _, k := range order {
		t.Run(k.model+"/"+k.target, func(t *testing.T) {
			target, _ := cachebust.ParseTarget(k.target)
			p, m := realProbe(t, k.model, target)
			c, err := New(p, m, "", Options{ISL: 600, OSL: 16, Conversations: 7, Turns: 2, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Exact: true, Workers: 2,
				PrefixGroups: 3, PrefixLength: 200, Model: "m", ISLSet: true, OSLSet: true, TurnsSet: true})
			if err != nil {
				t.Fatal(err)
			}
			tr := &Tracer{model: m}
			groupPrefix := map[int]string{}
			for _, r := range cases[k] {
				conv, err := c.Conversation(r.Conv)
				if err != nil {
					t.Fatal(err)
				}
				req, err := wire.Build(conv, r.Turn, wire.Marker(conv, 0), nil)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case r.Error != "":
					t.Errorf("conv %d turn %d: the reference failed: %s", r.Conv, r.Turn, r.Error)
					continue
				case messagesSHA256(req.Messages) != r.MessagesSHA256:
					t.Errorf("conv %d turn %d: another request than the reference encoded", r.Conv, r.Turn)
					continue
				case r.RefTokens != r.TargetISL:
					t.Errorf("conv %d turn %d: the reference counts %d, target %d", r.Conv, r.Turn, r.RefTokens, r.TargetISL)
				}
				if r.Turn != 0 {
					continue
				}
				ids, err := tr.wireIDs(conv, wire.Marker(conv, 0))
				if err != nil {
					t.Fatal(err)
				}
				if got := blockSums(ids[:200], 200)[0]; got != r.PrefixSHA256 {
					t.Errorf("conv %d: our first 200 ids differ from the reference's", r.Conv)
				}
				if prev, ok := groupPrefix[r.Group]; ok && prev != r.PrefixSHA256 {
					t.Errorf("conv %d: group %d has two prefixes by the reference", r.Conv, r.Group)
				}
				groupPrefix[r.Group] = r.PrefixSHA256
			}
			seen := map[string]bool{}
			for _, s := range groupPrefix {
				if seen[s] {
					t.Error("two groups share a prefix by the reference")
				}
				seen[s] = true
			}
			if len(groupPrefix) != 3 {
				t.Errorf("%d groups, want 3", len(groupPrefix))
			}
		})
	}
}
