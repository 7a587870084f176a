// Package wire builds the chat messages of a conversation's requests, with
// the cache-bust marker injected, exactly as send puts them on the wire.
// compose's exact mode renders the same messages, so the ISL it promises
// and the ISL send produces cannot disagree.
package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
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
//
// The messages are the same for every endpoint: a Responses request's
// instructions are the system message and its input items the rest (the
// server turns them back into these messages), and a completions request
// is one user message whose content is the prompt (its conversation has
// one turn and no system prompt, so the marker lands on the prompt as
// cachebust.RouteEndpoint says).
func Messages(c *records.Conversation, turn int, marker string, replies []string) ([]map[string]any, error) {
	if turn < 0 || turn >= len(c.Turns) {
		return nil, fmt.Errorf("conversation %s: no turn %d", c.ID, turn)
	}
	if !c.Endpoint.MultiTurn() && (turn > 0 || c.SystemPrompt != nil) {
		return nil, fmt.Errorf("conversation %s: a %s request is one prompt: no turn %d, no system prompt", c.ID, c.Endpoint, turn)
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

// SpecialCounter also knows how many special tokens the tokenizer's
// post-processor adds to one sequence (a BOS, say).
type SpecialCounter interface {
	Counter
	NumSpecialTokensToAdd(pair bool) int
}

// CountEndpoint is the ISL a vLLM server reports for msgs sent to
// endpoint k (docs/reference/server-preprocessing.md §1–3):
//   - chat: Count's rule;
//   - responses: the same render, encoded with special tokens
//     (ResponsesRequest leaves add_special_tokens at its default, true),
//     so a BOS-adding tokenizer whose template prints a BOS gets two;
//     without a template, Count's bare rule;
//   - completions: the prompt (the one message's content), never
//     templated, encoded with special tokens.
func CountEndpoint(k endpoint.Kind, msgs []map[string]any, tmpl *chat.Template, tok SpecialCounter, now time.Time) (int, error) {
	switch k.Or() {
	case endpoint.Completions:
		if len(msgs) != 1 {
			return 0, fmt.Errorf("a completions request is one prompt, not %d messages", len(msgs))
		}
		prompt, _ := msgs[0]["content"].(string)
		return tok.Count(prompt) + tok.NumSpecialTokensToAdd(false), nil
	case endpoint.Responses:
		n, err := Count(msgs, tmpl, tok, now)
		if err != nil || tmpl == nil {
			return n, err
		}
		return n + tok.NumSpecialTokensToAdd(false), nil
	}
	return Count(msgs, tmpl, tok, now)
}

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
func EndpointURL(raw string) (string, error) { return URLFor(endpoint.Chat, raw) }

// URLFor turns a server URL into endpoint k's URL: a bare
// http://HOST:PORT (or one ending in /v1) gets k's standard path; any
// other path is used as given.
func URLFor(k endpoint.Kind, raw string) (string, error) {
	shown := RedactURL(raw)
	if !strings.Contains(raw, "://") {
		// url.Parse reads "127.0.0.1:8000" as a bad path and
		// "localhost:8000" as the scheme "localhost".
		return "", fmt.Errorf("%q has no scheme: add http:// (http://%s) or https://", shown, shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Its message repeats the URL, password and all.
		msg := err.Error()
		if ue, ok := errors.AsType[*url.Error](err); ok {
			msg = ue.Err.Error()
		}
		return "", fmt.Errorf("%q: %s", shown, msg)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: want http:// or https://", shown)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", shown)
	}
	switch strings.TrimSuffix(u.Path, "/") {
	case "", "/v1":
		u.Path = k.Path()
	}
	return u.String(), nil
}

// RedactURL is raw with the password of its user information replaced by
// xxxxx (user:xxxxx@host), for messages: a URL may carry one
// (http://user:secret@host) and errors must not repeat it. A URL that
// does not parse (or has no scheme) is redacted by its shape: the
// password is what lies between the first ":" after "://" (or the
// start) and the last "@" before the path.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	prefix, rest, ok := strings.Cut(raw, "://")
	if ok {
		prefix += "://"
	} else {
		prefix, rest = "", raw // user:secret@host:8000, no scheme
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
}
