// Package prefixcache predicts what a server's automatic prefix cache
// holds: vLLM's scheme of fixed-size token blocks, each named by a hash of
// its tokens and of the block before it, so a block can hit only when the
// whole prefix up to it was seen before. compose names the blocks of each
// request it writes (Chain); send replays those names in issue order
// through an unbounded Cache to give every request its expected cached
// tokens.
package prefixcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// DefaultBlockSize is vLLM's default KV-cache block (16 tokens).
const DefaultBlockSize = 16

// hashLen is the bytes kept per block name: 64 bits make a collision
// among a benchmark's blocks vanishingly unlikely.
const hashLen = 8

// Chain names the full blocks of a prompt's token ids: block k covers
// ids[k·size, (k+1)·size) and its name hashes its ids and block k−1's
// name. The names are returned concatenated in hex (16 digits a block),
// the form records carry. A partial last block has no name: a server
// caches full blocks only. A size below 1 names no block.
func Chain(ids []int, size int) string {
	if size < 1 {
		return ""
	}
	n := len(ids) / size
	out := make([]byte, 0, n*2*hashLen)
	var parent [hashLen]byte
	buf := make([]byte, hashLen+4*size)
	for k := range n {
		copy(buf, parent[:])
		for i, id := range ids[k*size : (k+1)*size] {
			binary.LittleEndian.PutUint32(buf[hashLen+4*i:], uint32(id))
		}
		sum := sha256.Sum256(buf)
		copy(parent[:], sum[:hashLen])
		out = hex.AppendEncode(out, parent[:])
	}
	return string(out)
}

// CheckChain refuses a string that is not a sequence of block names.
func CheckChain(chain string) error {
	if len(chain)%(2*hashLen) != 0 {
		return fmt.Errorf("%d hex digits, not a multiple of %d (one name per block)", len(chain), 2*hashLen)
	}
	for i := 0; i < len(chain); i++ {
		if c := chain[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("byte %d is %q, not a lower-case hex digit", i, c)
		}
	}
	return nil
}

// Cache is an unbounded prefix cache over block names: nothing is ever
// evicted, so it predicts a server whose cache is large enough for the
// benchmark. It is not safe for concurrent use.
type Cache struct {
	size int
	seen map[string]struct{}
}

// New returns an empty cache of blocks of size tokens.
func New(size int) *Cache { return &Cache{size: size, seen: map[string]struct{}{}} }

// Request looks a prompt of promptTokens tokens up, given its block
// names (Chain), and then caches all its blocks. It returns the tokens a
// server finds cached: the leading blocks seen before, at most
// (promptTokens−1)/size of them, since vLLM always computes the prompt's
// last token (a fully cached prompt hits one block less).
func (c *Cache) Request(chain string, promptTokens int) (int, error) {
	if c.size < 1 {
		return 0, fmt.Errorf("block size %d: must be at least 1", c.size)
	}
	if err := CheckChain(chain); err != nil {
		return 0, err
	}
	n := len(chain) / (2 * hashLen)
	hit := 0
	for hit < n {
		if _, ok := c.seen[chain[hit*2*hashLen:(hit+1)*2*hashLen]]; !ok {
			break
		}
		hit++
	}
	for k := hit; k < n; k++ {
		c.seen[chain[k*2*hashLen:(k+1)*2*hashLen]] = struct{}{}
	}
	if promptTokens > 0 {
		hit = min(hit, (promptTokens-1)/c.size)
	}
	return hit * c.size, nil
}
