package send

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/wire"
)

// withBlocks gives every turn of c the cache blocks of ids (blocks of 4)
// and a wire ISL of len(ids).
func withBlocks(c records.Conversation, ids ...[]int) records.Conversation {
	c.CacheBlockSize = 4
	for i := range c.Turns {
		c.Turns[i].CacheBlocks = prefixcache.Chain(ids[i], 4)
		n := len(ids[i])
		c.Turns[i].WireISL = &n
	}
	return c
}

// TestDryRunExpectedCachedTokens: requests are looked up in send order,
// each after every request before it was cached.
func TestDryRunExpectedCachedTokens(t *testing.T) {
	a := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	convs := []records.Conversation{
		withBlocks(conv("a", 0, cachebust.None, "", "x"), a),
		withBlocks(conv("b", 1, cachebust.None, "", "x", "y"), []int{1, 2, 3, 4, 0, 0, 0, 0, 0}, []int{1, 2, 3, 4, 0, 0, 0, 0, 0, 7, 7, 7, 7, 7}),
		conv("c", 2, cachebust.None, "", "no blocks"),
	}
	var out bytes.Buffer
	if _, err := DryRun(&out, convs, newBuilder(t, PayloadOptions{}), Shard{}, FormatJSONL); err != nil {
		t.Fatal(err)
	}
	var got []*int
	for line := range strings.Lines(out.String()) {
		var r records.Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ExpectedCachedTokens)
	}
	// a: cold. b turn 0 shares a's first block. b turn 1 holds b turn 0's
	// two blocks (8 of its 14 tokens). c: compose named no blocks.
	if len(got) != 4 || got[0] == nil || *got[0] != 0 || got[1] == nil || *got[1] != 4 || got[2] == nil || *got[2] != 8 || got[3] != nil {
		t.Errorf("expected_cached_tokens %v", got)
	}
}

// Live, only the requests compose named count: not later turns (their
// history holds the server's replies) nor another pass's marker.
func TestExpectOnlyComposedRequests(t *testing.T) {
	c := withBlocks(conv("a", 0, cachebust.FirstTurnSuffix, "", "x", "y"), []int{1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 5, 6})
	p := newCachePredictor()
	if got := p.expect(&c, 0, 0, wire.Marker(&c, 0), true); got == nil || *got != 0 {
		t.Errorf("turn 0: %v", got)
	}
	if got := p.expect(&c, 1, 0, wire.Marker(&c, 0), true); got != nil {
		t.Errorf("live turn 1: %v, want none", *got)
	}
	if got := p.expect(&c, 0, 1, wire.Marker(&c, 1), true); got != nil {
		t.Errorf("pass 1: %v, want none", *got)
	}
	if got := p.expect(&c, 0, 0, "", true); got != nil {
		t.Errorf("dropped marker: %v, want none", *got)
	}
	if got := p.expect(&c, 0, 0, wire.Marker(&c, 0), true); got == nil || *got != 4 {
		t.Errorf("turn 0 again: %v, want 4 (5 tokens: one full block, cached)", got)
	}
}

// A recycle pass without a marker (target none) repeats the request
// compose named: predicted, and fully cached but for the block vLLM always
// computes; with a marker it is another request.
func TestExpectRecyclePass(t *testing.T) {
	c := withBlocks(conv("a", 0, cachebust.None, "", "x"), []int{1, 2, 3, 4, 5, 6, 7, 8})
	p := newCachePredictor()
	if got := p.expect(&c, 0, 0, "", true); got == nil || *got != 0 {
		t.Errorf("pass 0: %v", got)
	}
	if got := p.expect(&c, 0, 1, "", true); got == nil || *got != 4 {
		t.Errorf("pass 1: %v, want 4 (8 tokens, two full blocks; the last is computed again)", got)
	}
	m := withBlocks(conv("b", 1, cachebust.FirstTurnSuffix, "", "x"), []int{1, 2, 3, 4, 5})
	if got := p.expect(&m, 0, 1, wire.Marker(&m, 0), true); got != nil {
		t.Errorf("pass 1 built with pass 0's marker: %v, want none", *got)
	}
}

func TestBadCacheBlocks(t *testing.T) {
	c := conv("a", 0, cachebust.None, "", "x")
	c.Turns[0].CacheBlocks = "xyz"
	line, _ := json.Marshal(c)
	if _, err := ReadConversations(bytes.NewReader(line), "in"); err == nil || !strings.Contains(err.Error(), `in:1: field "turns.0.cache_blocks"`) {
		t.Errorf("error %v", err)
	}
}
