package report

import (
	"fmt"

	"github.com/islkit/islkit/internal/records"
)

// ServerCache is what the server reported as cached, whether or not send
// expected anything (PrefixCache compares the two where it did), and the
// first requests whose cache-bust marker was itself cached: a marker is
// new in every run, so a server can have cached it only from an earlier
// run that used the same benchmark id (compose --benchmark-id), and the
// run's prompts were not the cold prompts it asked for.
type ServerCache struct {
	// Requests carry the server's cached_tokens; PromptTokens is their
	// reported ISL summed, CachedTokens their cached tokens, HitRate the
	// ratio.
	Requests     uint64  `json:"requests"`
	PromptTokens uint64  `json:"prompt_tokens"`
	CachedTokens uint64  `json:"cached_tokens"`
	HitRate      float64 `json:"hit_rate"`
	// MarkerHits counts first requests (turn 0) whose cached tokens reach
	// the end of their marker (isl.marker_end); MarkerHitExamples lists
	// the first few.
	MarkerHits        uint64      `json:"marker_hits"`
	MarkerHitExamples []MarkerHit `json:"marker_hit_examples"`
}

// MarkerHit is a first request whose marker was served from a cache.
type MarkerHit struct {
	ConversationID string `json:"conversation_id"`
	CachedTokens   int    `json:"cached_tokens"`
	MarkerEnd      int    `json:"marker_end"`
}

// addServerCache counts one record's server cached tokens; prompt is its
// reported ISL.
func (s *Accumulator) addServerCache(isl records.ISL, prompt int) {
	if isl.ServerCached == nil {
		return
	}
	c := s.serverCache
	if c == nil {
		c = &ServerCache{}
		s.serverCache = c
	}
	c.Requests++
	c.PromptTokens += uint64(max(prompt, 0))
	c.CachedTokens += uint64(max(*isl.ServerCached, 0))
	if isl.MarkerEnd != nil && *isl.ServerCached >= *isl.MarkerEnd {
		c.MarkerHits++
		if len(c.MarkerHitExamples) < maxCacheMisses {
			c.MarkerHitExamples = append(c.MarkerHitExamples, MarkerHit{isl.ConversationID, *isl.ServerCached, *isl.MarkerEnd})
		}
	}
}

// serverCacheReport finishes the rate (nil when no server reported).
func (s *Accumulator) serverCacheReport() *ServerCache {
	if s.serverCache == nil {
		return nil
	}
	c := *s.serverCache
	if c.PromptTokens > 0 {
		c.HitRate = float64(c.CachedTokens) / float64(c.PromptTokens)
	}
	if c.MarkerHitExamples == nil {
		c.MarkerHitExamples = []MarkerHit{}
	}
	return &c
}

// MarkerHitWarning says that n first requests found their own cache-bust
// marker cached; first describes one.
func MarkerHitWarning(n uint64, first string) string {
	return fmt.Sprintf("%d first request(s) found their cache-bust marker already cached (%s): the server had seen these markers before, so the run measured warm prompts, not cold ones; compose without --benchmark-id (a fresh id per run), or clear the server's prefix cache", n, first)
}

// lines are the summary's server-cache lines.
func (c *ServerCache) lines() []string {
	out := []string{fmt.Sprintf("server cached tokens: %d of %d prompt tokens (%.1f%%) on %d requests", c.CachedTokens, c.PromptTokens, 100*c.HitRate, c.Requests)}
	if c.MarkerHits > 0 {
		e := c.MarkerHitExamples[0]
		out = append(out, "warning: "+MarkerHitWarning(c.MarkerHits, fmt.Sprintf("first: %s, %d cached, the marker ends at token %d", e.ConversationID, e.CachedTokens, e.MarkerEnd)))
	}
	return out
}
