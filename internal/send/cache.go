package send

import (
	"sync"

	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/wire"
)

// cachePredictor replays the cache blocks compose named through an
// unbounded prefix cache, in the order send issues the requests, to give
// each request its expected cached tokens.
type cachePredictor struct {
	mu     sync.Mutex
	caches map[int]*prefixcache.Cache // by block size
}

func newCachePredictor() *cachePredictor {
	return &cachePredictor{caches: map[int]*prefixcache.Cache{}}
}

// expect is the expected cached tokens of turn `turn` of c on pass
// `pass`, built with marker `marker`; nil when compose named no blocks or
// the request is not the one it named (another pass's marker, a dropped
// marker, or — live — a history holding real replies). A recycle pass
// without marker (target none) sends the very request compose named, so
// it is predicted too.
func (p *cachePredictor) expect(c *records.Conversation, turn, pass int, marker string, live bool) *int {
	t := &c.Turns[turn]
	if p == nil || c.CacheBlockSize < 1 || marker != wire.Marker(c, 0) || pass != 0 && marker != "" || live && turn > 0 {
		return nil
	}
	prompt := 0
	if t.WireISL != nil {
		prompt = *t.WireISL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cache := p.caches[c.CacheBlockSize]
	if cache == nil {
		cache = prefixcache.New(c.CacheBlockSize)
		p.caches[c.CacheBlockSize] = cache
	}
	n, err := cache.Request(t.CacheBlocks, prompt)
	if err != nil {
		return nil // checked when the conversations were read
	}
	return &n
}
