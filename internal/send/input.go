// Package send turns compose's conversations into OpenAI chat-completions
// requests: a dry run writes the exact payloads, a live run sends them to a
// server and records one islkit.request record per request.
package send

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
)

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ReadConversations reads every conversation record of r before anything
// is sent, so a malformed line stops the run with its line number and no
// request goes out. A conversation id that repeats is refused: the marker
// digest is made from the id, so both copies would carry one marker and
// the second would hit the server's prefix cache.
func ReadConversations(r io.Reader, name string) ([]records.Conversation, error) {
	jr := jsonl.NewReader(r, name)
	var out []records.Conversation
	seen := map[string]int{} // id -> line
	for {
		line, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		c, err := DecodeConversation(line)
		if err != nil {
			return nil, err
		}
		if first, ok := seen[c.ID]; ok {
			return nil, line.FieldErrorf("id", "conversation id %q repeats line %d: both would get the same cache-bust marker (compose once with more --conversations instead of joining outputs)", c.ID, first)
		}
		seen[c.ID] = line.Num
		out = append(out, c)
	}
}

// DecodeConversation decodes and checks one conversation line.
func DecodeConversation(line jsonl.Line) (records.Conversation, error) {
	var c records.Conversation
	if err := records.Decode(line, records.KindConversation, &c); err != nil {
		return c, err
	}
	if c.ID == "" {
		return c, line.FieldErrorf("id", "empty conversation id")
	}
	if c.Index < 0 {
		return c, line.FieldErrorf("index", "negative index %d", c.Index)
	}
	if !c.CacheBust.Valid() {
		return c, line.FieldErrorf("cache_bust", "missing cache-bust target")
	}
	if len(c.Turns) == 0 {
		return c, line.FieldErrorf("turns", "no turns")
	}
	// compose sized the turns for this landing; if the routing table now
	// disagrees, every wire ISL would be off by the marker's tokens.
	if want := cachebust.Route(c.CacheBust, c.SystemPrompt != nil); c.Landing != want {
		return c, line.FieldErrorf("marker_landing", "is %s but target %s routes to %s", c.Landing, c.CacheBust, want)
	}
	for i, t := range c.Turns {
		if t.Index != i {
			return c, line.FieldErrorf(fmt.Sprintf("turns.%d.index", i), "is %d, want %d", t.Index, i)
		}
		if t.MaxTokens < 0 {
			return c, line.FieldErrorf(fmt.Sprintf("turns.%d.max_tokens", i), "negative: %d", t.MaxTokens)
		}
		if err := prefixcache.CheckChain(t.CacheBlocks); err != nil {
			return c, line.FieldErrorf(fmt.Sprintf("turns.%d.cache_blocks", i), "%v", err)
		}
	}
	if f := c.ComposedFor; f != nil {
		if !hexSHA256.MatchString(f.TokenizerSHA256) {
			return c, line.FieldErrorf("composed_for.tokenizer_sha256", "%q is not a hex SHA-256", f.TokenizerSHA256)
		}
		if f.ChatTemplateSHA256 != "" && !hexSHA256.MatchString(f.ChatTemplateSHA256) {
			return c, line.FieldErrorf("composed_for.chat_template_sha256", "%q is not a hex SHA-256", f.ChatTemplateSHA256)
		}
	}
	if c.CacheBlockSize < 0 {
		return c, line.FieldErrorf("cache_block_size", "negative: %d", c.CacheBlockSize)
	}
	return c, nil
}
