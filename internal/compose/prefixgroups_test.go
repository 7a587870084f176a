package compose

import (
	"slices"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
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
		c, err := New(p, m, "", Options{ISL: 400, OSL: 16, Conversations: 7, Turns: 2, Seed: 3, Exact: true, Workers: 2,
			PrefixGroups: 3, PrefixLength: 150, ISLSet: true})
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
	if _, err := New(p, m, "", Options{ISL: 400, OSL: 16, Conversations: 1, Turns: 1, Exact: true, PrefixGroups: 2, PrefixLength: 100}); !IsUsage(err) {
		t.Errorf("prefix target: %v", err)
	}
}
