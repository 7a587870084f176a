package prefixcache

import (
	"strings"
	"testing"
)

// The names are Python's hashlib.sha256 over the parent name (8 zero
// bytes for the first block) and the block's ids as little-endian uint32,
// first 8 bytes, in hex.
func TestChain(t *testing.T) {
	if got := Chain([]int{1, 2, 3, 4, 5, 6, 7}, 3); got != "a10c6ce6a0f5f730"+"223e1166b7cdda04" {
		t.Errorf("Chain = %s", got)
	}
	// Same first block, another second: the first name is shared.
	if got := Chain([]int{1, 2, 3, 9, 9, 9}, 3); got != "a10c6ce6a0f5f730"+"264dca2a1e321072" {
		t.Errorf("Chain = %s", got)
	}
	if got := Chain([]int{1, 2}, 3); got != "" {
		t.Errorf("a partial block is named: %q", got)
	}
}

func TestCache(t *testing.T) {
	c := New(4)
	a := Chain([]int{1, 2, 3, 4, 5, 6, 7, 8, 9}, 4) // 2 full blocks
	b := Chain([]int{1, 2, 3, 4, 5, 6, 7, 0, 9}, 4) // shares block 0
	d := Chain([]int{1, 2, 3, 4, 5, 6, 7, 8}, 4)    // a's two blocks, nothing after
	for _, tt := range []struct {
		chain  string
		prompt int
		want   int
	}{
		{a, 9, 0},  // cold
		{a, 9, 8},  // both blocks
		{b, 9, 4},  // block 0 only
		{d, 8, 4},  // fully cached: vLLM recomputes the last token, so one block less
		{d, 12, 8}, // a longer prompt with the same blocks
		{"", 3, 0},
	} {
		if got, err := c.Request(tt.chain, tt.prompt); err != nil || got != tt.want {
			t.Errorf("Request(%s, %d) = %d, %v; want %d", tt.chain, tt.prompt, got, err, tt.want)
		}
	}
	if _, err := c.Request("abc", 3); err == nil {
		t.Error("a chain of 3 hex digits accepted")
	}
}

func TestCheckChain(t *testing.T) {
	for _, bad := range []string{"0", strings.Repeat("g", 16), strings.Repeat("A", 16)} {
		if CheckChain(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := CheckChain(strings.Repeat("0a", 16)); err != nil {
		t.Error(err)
	}
}

func FuzzCheckChain(f *testing.F) {
	f.Add("a10c6ce6a0f5f730")
	f.Fuzz(func(t *testing.T, s string) {
		if CheckChain(s) == nil {
			if _, err := New(16).Request(s, 100); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A block size below 1 (both functions are exported) is refused or names
// nothing instead of dividing by zero.
func TestZeroBlockSize(t *testing.T) {
	if got := Chain([]int{1, 2, 3}, 0); got != "" {
		t.Errorf("Chain with size 0 = %q, want no blocks", got)
	}
	if _, err := New(0).Request("", 5); err == nil {
		t.Error("a cache of 0-token blocks accepted a request")
	}
}
