// Package wire builds the chat messages of a conversation's requests, with
// the cache-bust marker injected, exactly as send puts them on the wire.
// compose's exact mode renders the same messages, so the ISL it promises
// and the ISL send produces cannot disagree.
package wire

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/records"
)

// Marker is the marker every request of conversation c carries on recycle
// pass `pass` (0 for the first pass over the dataset): AIPerf's digest of
// (benchmark id, pass, conversation index, conversation id). "" when the
// target is none.
func Marker(c *records.Conversation, pass int) string {
	return cachebust.Marker(c.CacheBust, c.BenchmarkID, pass, c.Index, c.ID)
}

// Messages returns the messages of the request for turn `turn` of c: the
// system prompt (if any), then each earlier user turn followed by its
// assistant reply, then the user turn itself, with the marker injected
// where the routing table says. replies[k] replaces turn k's synthetic
// reply (live mode uses the server's real replies); nil or short uses the
// synthetic ones.
func Messages(c *records.Conversation, turn int, marker string, replies []string) ([]map[string]any, error) {
	if turn < 0 || turn >= len(c.Turns) {
		return nil, fmt.Errorf("conversation %s: no turn %d", c.ID, turn)
	}
	msgs := make([]map[string]any, 0, 2*turn+2)
	if c.SystemPrompt != nil {
		msgs = append(msgs, map[string]any{"role": "system", "content": c.SystemPrompt.Text})
	}
	for k := 0; k < turn; k++ {
		reply := c.Turns[k].Assistant
		if k < len(replies) {
			reply = replies[k]
		}
		msgs = append(msgs,
			map[string]any{"role": "user", "content": c.Turns[k].Text},
			map[string]any{"role": "assistant", "content": reply})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": c.Turns[turn].Text})
	if marker == "" || c.CacheBust == cachebust.None {
		return msgs, nil
	}
	res := cachebust.InjectOwned(c.CacheBust, marker, msgs) // msgs are this call's own
	if res.Dropped != nil {
		return nil, fmt.Errorf("conversation %s: %w", c.ID, res.Dropped)
	}
	return res.Messages, nil
}

// Counter counts tokens without special tokens.
type Counter interface{ Count(string) int }

// Count is the ISL a server sees for msgs: rendered through the template
// with the generation prompt and encoded without special tokens; without a
// template, the message contents joined by one space (measure's bare
// count).
func Count(msgs []map[string]any, tmpl *chat.Template, tok Counter, now time.Time) (int, error) {
	if tmpl == nil {
		parts := make([]string, len(msgs))
		for i, m := range msgs {
			parts[i], _ = m["content"].(string)
		}
		return tok.Count(strings.Join(parts, " ")), nil
	}
	text, err := tmpl.Render(chat.RenderInput{Messages: msgs, AddGenerationPrompt: true, Now: now})
	if err != nil {
		return 0, err
	}
	return tok.Count(text), nil
}

// EndpointURL turns a server URL into its chat-completions URL: a bare
// http://HOST:PORT (or one ending in /v1) gets the standard path; any other
// path is used as given.
func EndpointURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: want http:// or https://", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", raw)
	}
	switch strings.TrimSuffix(u.Path, "/") {
	case "", "/v1":
		u.Path = "/v1/chat/completions"
	}
	return u.String(), nil
}
