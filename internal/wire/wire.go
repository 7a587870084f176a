// Package wire builds the request of each turn of a conversation record
// (a request.Request), with the cache-bust marker injected, exactly as
// send puts it on the wire. compose's exact mode counts the same request
// (through its server profile), so the ISL it promises and the ISL send
// produces cannot disagree.
package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
)

// Marker is the marker every request of conversation c carries on recycle
// pass `pass` (0 for the first pass over the dataset): AIPerf's digest of
// (benchmark id, pass, conversation index, conversation id). "" when the
// target is none.
func Marker(c *records.Conversation, pass int) string {
	return cachebust.Marker(c.CacheBust, c.BenchmarkID, pass, c.Index, c.ID)
}

// Build returns the request for turn `turn` of c: the system prompt (if
// any), then each earlier user turn followed by its assistant reply, then
// the user turn itself, with the marker injected where the routing table
// says. replies[k] replaces turn k's synthetic reply (live mode uses the
// server's real replies); nil or short uses the synthetic ones.
//
// The messages are the same for every endpoint: a Responses request's
// instructions are the system message and its input items the rest (the
// server turns them back into these messages), and a completions request
// is one user message whose content is the prompt (its conversation has
// one turn and no system prompt, so the marker lands on the prompt as
// cachebust.RouteEndpoint says).
func Build(c *records.Conversation, turn int, marker string, replies []string) (*request.Request, error) {
	if turn < 0 || turn >= len(c.Turns) {
		return nil, fmt.Errorf("conversation %s: no turn %d", c.ID, turn)
	}
	if !c.Endpoint.MultiTurn() && (turn > 0 || c.SystemPrompt != nil) {
		return nil, fmt.Errorf("conversation %s: a %s request is one prompt: no turn %d, no system prompt", c.ID, c.Endpoint, turn)
	}
	msgs := make([]request.Message, 0, 2*turn+2)
	if sp := c.SystemPrompt; sp != nil {
		m := request.Message{Role: "system", Content: sp.Text}
		if sp.Parts != nil {
			m.Content, m.Parts = "", textParts(sp.Parts)
		}
		msgs = append(msgs, m)
	}
	for k := 0; k < turn; k++ {
		t := &c.Turns[k]
		msgs = append(msgs, userMessage(t))
		switch {
		case k < len(replies):
			msgs = append(msgs, request.Message{Role: "assistant", Content: replies[k]})
		case t.History != nil:
			for i := range t.History {
				msgs = append(msgs, message(&t.History[i]))
			}
		default:
			msgs = append(msgs, request.Message{Role: "assistant", Content: t.Assistant})
		}
	}
	msgs = append(msgs, userMessage(&c.Turns[turn]))
	req := &request.Request{Endpoint: c.Endpoint, Messages: msgs, Tools: c.Tools, MarkerAt: -1}
	if marker == "" || c.CacheBust == cachebust.None {
		return req, nil
	}
	res := cachebust.InjectOwned(c.CacheBust, marker, msgs) // msgs are this call's own
	if res.Dropped != nil {
		return nil, fmt.Errorf("conversation %s: %w", c.ID, res.Dropped)
	}
	req.Messages, req.Marker, req.MarkerAt = res.Messages, marker, res.Index
	return req, nil
}

// userMessage is turn t's user message: its text, in the dataset's
// message when the turn has one (as its last text part).
func userMessage(t *records.Turn) request.Message {
	if t.User == nil && len(t.Images) > 0 {
		parts := make([]request.Part, len(t.Images)+1)
		for i, im := range t.Images {
			parts[i].ImageURL = im.URL
		}
		parts[len(t.Images)].Text = t.Text
		return request.Message{Role: "user", Parts: parts}
	}
	if t.User == nil {
		return request.Message{Role: "user", Content: t.Text}
	}
	m := message(t.User)
	switch {
	case len(m.Parts) > 0:
		// The last text part (images may follow it).
		last := len(m.Parts) - 1
		for last > 0 && m.Parts[last].ImageURL != "" {
			last--
		}
		m.Parts[last].Text = t.Text
	case m.Parts == nil:
		m.Content, m.Null = t.Text, false
	}
	return m
}

// message is a dataset message as it goes on the wire.
func message(m *records.Message) request.Message {
	out := request.Message{Role: m.Role, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Reasoning: m.ReasoningContent}
	switch {
	case m.Parts != nil && len(m.Images) > 0:
		out.Parts = imageParts(m.Parts, m.Images)
	case m.Parts != nil:
		out.Parts = textParts(m.Parts)
	case m.Content != nil:
		out.Content = *m.Content
	default:
		out.Null = true
	}
	return out
}

// imageParts are a dataset message's parts as it gave them: each image
// at its index in the content list, the texts in order around them.
func imageParts(texts []string, images []records.PartImage) []request.Part {
	parts := make([]request.Part, 0, len(texts)+len(images))
	next := 0
	for _, im := range images {
		for len(parts) < im.At && next < len(texts) {
			parts = append(parts, request.Part{Text: texts[next]})
			next++
		}
		parts = append(parts, request.Part{ImageURL: im.URL})
	}
	for _, t := range texts[next:] {
		parts = append(parts, request.Part{Text: t})
	}
	return parts
}

// textParts are texts as parts.
func textParts(texts []string) []request.Part {
	parts := make([]request.Part, len(texts))
	for i, t := range texts {
		parts[i] = request.Part{Text: t}
	}
	return parts
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
