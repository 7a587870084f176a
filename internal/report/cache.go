package report

import (
	"fmt"

	"github.com/islkit/islkit/internal/records"
)

// maxCacheMisses bounds the requests listed by id where the server's
// cached tokens differ from the expected ones.
const maxCacheMisses = 10

// PrefixCache compares the cached tokens send expected (an unbounded
// prefix cache replayed in send order) with those the server reported,
// over the requests that carry both.
type PrefixCache struct {
	// Requests carry an expected count; Compared also the server's.
	Requests uint64 `json:"requests"`
	Compared uint64 `json:"compared"`
	// PromptTokens is the reported ISL summed over the Requests;
	// Expected and (over Compared) Server the cached tokens; the hit
	// rates are cached over prompt tokens (Server's over the prompt tokens
	// of Compared).
	PromptTokens   uint64        `json:"prompt_tokens"`
	Expected       uint64        `json:"expected_cached_tokens"`
	ExpectedRate   float64       `json:"expected_hit_rate"`
	Server         uint64        `json:"server_cached_tokens"`
	ServerRate     float64       `json:"server_hit_rate"`
	Differ         uint64        `json:"requests_differ"`
	DifferExample  []CacheDiffer `json:"differ_examples"`
	comparedPrompt uint64
}

// CacheDiffer is a request whose server cached tokens differ from the
// expected ones.
type CacheDiffer struct {
	ConversationID string `json:"conversation_id"`
	Turn           *int   `json:"turn,omitempty"`
	Expected       int    `json:"expected_cached_tokens"`
	Server         int    `json:"server_cached_tokens"`
}

// addCache counts one record's cached tokens; prompt is its reported ISL.
func (s *Accumulator) addCache(isl records.ISL, prompt int) {
	if isl.ExpectedCached == nil {
		return
	}
	p := s.cache
	if p == nil {
		p = &PrefixCache{}
		s.cache = p
	}
	p.Requests++
	p.PromptTokens += uint64(max(prompt, 0))
	p.Expected += uint64(max(*isl.ExpectedCached, 0))
	if isl.ServerCached == nil {
		return
	}
	p.Compared++
	p.comparedPrompt += uint64(max(prompt, 0))
	p.Server += uint64(max(*isl.ServerCached, 0))
	if *isl.ServerCached != *isl.ExpectedCached {
		p.Differ++
		if len(p.DifferExample) < maxCacheMisses {
			p.DifferExample = append(p.DifferExample, CacheDiffer{isl.ConversationID, isl.TurnIndex, *isl.ExpectedCached, *isl.ServerCached})
		}
	}
}

// cacheReport finishes the rates (nil when no record expected anything).
func (s *Accumulator) cacheReport() *PrefixCache {
	if s.cache == nil {
		return nil
	}
	p := *s.cache
	if p.PromptTokens > 0 {
		p.ExpectedRate = float64(p.Expected) / float64(p.PromptTokens)
	}
	if p.comparedPrompt > 0 {
		p.ServerRate = float64(p.Server) / float64(p.comparedPrompt)
	}
	if p.DifferExample == nil {
		p.DifferExample = []CacheDiffer{}
	}
	return &p
}

// line is the summary's prefix-cache line.
func (p *PrefixCache) line() string {
	l := fmt.Sprintf("prefix cache: %d requests, expected %d cached tokens (%.1f%% of prompt)", p.Requests, p.Expected, 100*p.ExpectedRate)
	if p.Compared == 0 {
		return l + ", no server counts"
	}
	l += fmt.Sprintf("; server %d (%.1f%%) on %d, %d differ", p.Server, 100*p.ServerRate, p.Compared, p.Differ)
	if p.Differ > 0 {
		e := p.DifferExample[0]
		l += fmt.Sprintf(" (first: %s expected %d, server %d)", e.ConversationID, e.Expected, e.Server)
	}
	return l
}
