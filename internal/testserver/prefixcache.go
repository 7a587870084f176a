package testserver

import (
	"encoding/binary"
	"sync"
)

// blockTrie is the server's automatic prefix cache: unbounded, in blocks
// of `size` tokens, each block reachable only through the blocks before
// it (what vLLM's chained block hashes amount to). It is kept as a trie of
// the blocks' token ids, a different construction from the hash chain
// send predicts with, so the live check compares two implementations.
type blockTrie struct {
	size int
	mu   sync.Mutex
	root trieNode
}

type trieNode struct {
	next map[string]*trieNode // block ids, 4 bytes each, -> child
}

// lookupInsert returns the cached tokens for a prompt of ids (the leading
// full blocks already present, at most (len(ids)−1)/size of them: vLLM
// computes the last prompt token even when all of it is cached) and then
// caches every full block of the prompt.
func (c *blockTrie) lookupInsert(ids []int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	node, hit, missed := &c.root, 0, false
	key := make([]byte, 4*c.size)
	for k := 0; (k+1)*c.size <= len(ids); k++ {
		for i, id := range ids[k*c.size : (k+1)*c.size] {
			binary.BigEndian.PutUint32(key[4*i:], uint32(id))
		}
		child := node.next[string(key)]
		if child == nil {
			missed = true
			child = &trieNode{}
			if node.next == nil {
				node.next = map[string]*trieNode{}
			}
			node.next[string(key)] = child
		} else if !missed {
			hit++
		}
		node = child
	}
	if len(ids) > 0 {
		hit = min(hit, (len(ids)-1)/c.size)
	}
	return hit * c.size
}
