package send

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/wire"
)

// PayloadOptions shape the chat-completions body.
type PayloadOptions struct {
	// Model overrides Conversation.Model when set.
	Model string
	// MaxTokensField is "max_tokens" (default) or "max_completion_tokens".
	MaxTokensField string
	Stream         bool
	// ExtraBody is a JSON object merged into every body (ignore_eos,
	// min_tokens, chat_template_kwargs, ...). It may not set the fields
	// send owns (ownedKeys).
	ExtraBody string
}

// Builder builds the chat-completions request bodies send puts on the
// wire (the messages come from wire.Messages; internal/extract reads such
// bodies back). It is safe for concurrent use.
type Builder struct {
	opts  PayloadOptions
	extra []field
	// warn is called once per dropped marker (the caller keeps it to one
	// warning per run).
	warn func(error)
	// promptList writes a completions prompt as a one-element list, as
	// AIPerf's CompletionsEndpoint does (its inputs.json); vLLM counts a
	// list of prompts as their sum, so the count is the same.
	promptList bool
}

// aiperfShape is b writing bodies as AIPerf's format_payload does.
func (b *Builder) aiperfShape() *Builder {
	c := *b
	c.promptList = true
	return &c
}

type field struct {
	key    string
	quoted []byte // key as a JSON string
	val    []byte
}

// NewBuilder checks opts. warn may be nil.
func NewBuilder(opts PayloadOptions, warn func(error)) (*Builder, error) {
	switch opts.MaxTokensField {
	case "":
		opts.MaxTokensField = "max_tokens"
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, fmt.Errorf("--max-tokens-field %q: want max_tokens or max_completion_tokens", opts.MaxTokensField)
	}
	b := &Builder{opts: opts, warn: warn}
	if opts.ExtraBody != "" {
		fs, err := parseObject([]byte(opts.ExtraBody))
		if err != nil {
			return nil, fmt.Errorf("--extra-body: %w", err)
		}
		for _, f := range fs {
			if why, ok := ownedKeys[f.key]; ok {
				return nil, fmt.Errorf("--extra-body may not set %q: %s", f.key, why)
			}
		}
		b.extra = fs
	}
	return b, nil
}

// ownedKeys are the body fields send writes itself, with what sets each:
// overriding one would make the record disagree with the payload (its
// max_tokens, model, stream) and later turns miss their target.
var ownedKeys = map[string]string{
	"messages":              "send builds them from the conversations",
	"prompt":                "send builds it from the conversations (--endpoint completions)",
	"input":                 "send builds it from the conversations (--endpoint responses)",
	"instructions":          "send builds them from the conversation's system prompt (--endpoint responses)",
	"max_output_tokens":     "each turn's max_tokens comes from compose --osl (--endpoint responses)",
	"model":                 "set it with --model (or compose --model)",
	"max_tokens":            "each turn's max_tokens comes from compose --osl; --max-tokens-field picks the field",
	"max_completion_tokens": "each turn's max_tokens comes from compose --osl; --max-tokens-field picks the field",
	"stream":                "set it with --stream / --no-stream",
	"stream_options":        "send asks for usage in the stream itself; --stream / --no-stream decides",
}

// parseObject splits a JSON object into its fields, in document order,
// each value compacted; a key given twice is refused (servers disagree on
// which one wins).
func parseObject(data []byte) ([]field, error) {
	obj, err := jsonobj.Parse(data)
	if err != nil {
		return nil, err
	}
	out := make([]field, 0, len(obj))
	seen := make(map[string]bool, len(obj))
	for _, m := range obj {
		if seen[m.Key] {
			return nil, fmt.Errorf("duplicate key %q", m.Key)
		}
		seen[m.Key] = true
		var c bytes.Buffer
		if err := stdjson.Compact(&c, m.Value); err != nil {
			return nil, err
		}
		q, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		out = append(out, field{key: m.Key, quoted: q, val: c.Bytes()})
	}
	return out, nil
}

// CheckModels refuses conversations whose bodies would carry no model
// (compose ran without --model and send without --model).
func (b *Builder) CheckModels(convs []records.Conversation) error {
	for i := range convs {
		if b.Model(&convs[i]) == "" {
			return fmt.Errorf("conversation %s has no model: pass --model", convs[i].ID)
		}
	}
	return nil
}

// Model is the model name the body of c carries.
func (b *Builder) Model(c *records.Conversation) string {
	if b.opts.Model != "" {
		return b.opts.Model
	}
	return c.Model
}

// Built is one serialised request.
type Built struct {
	Body    []byte
	Marker  string
	Landing cachebust.Landing
}

// Build serialises the body of turn `turn` of c on recycle pass `pass`;
// replies are the server's real replies to earlier turns (nil in a dry
// run: compose's synthetic ones are used).
func (b *Builder) Build(c *records.Conversation, turn, pass int, replies []string) (Built, error) {
	marker := wire.Marker(c, pass)
	msgs, err := wire.Messages(c, turn, marker, replies)
	if errors.Is(err, cachebust.ErrDropped) {
		// AIPerf goes on without the marker; so do we, warning once.
		if b.warn != nil {
			b.warn(err)
		}
		marker = ""
		msgs, err = wire.Messages(c, turn, "", replies)
	}
	if err != nil {
		return Built{}, err
	}
	out := Built{Marker: marker}
	if marker != "" {
		out.Landing, _ = cachebust.RouteMessages(c.CacheBust, msgs)
	}
	buf := make([]byte, 0, 256+len(c.Turns[turn].Text)*(turn+1)*2)
	switch c.Endpoint.Or() {
	case endpoint.Completions:
		return b.completions(buf, c, turn, msgs, out)
	case endpoint.Responses:
		return b.responses(buf, c, turn, msgs, out)
	}
	// The keys are constants (and --extra-body's, checked JSON): written
	// as they are, not marshalled per request.
	buf = append(buf, `{"model":`...)
	buf = appendString(buf, b.Model(c))
	buf = append(buf, `,"messages":`...)
	if mb, ok := appendMessages(buf, msgs); ok {
		buf = mb
	} else {
		m, err := json.Marshal(msgs)
		if err != nil {
			return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
		}
		buf = append(buf, m...)
	}
	if mt := c.Turns[turn].MaxTokens; mt > 0 {
		buf = append(buf, `,"`...)
		buf = append(buf, b.opts.MaxTokensField...) // max_tokens or max_completion_tokens
		buf = append(buf, `":`...)
		buf = strconv.AppendInt(buf, int64(mt), 10)
	}
	buf = append(buf, `,"stream":`...)
	buf = strconv.AppendBool(buf, b.opts.Stream)
	if b.opts.Stream {
		// Usage arrives in a final chunk only when asked for.
		buf = append(buf, `,"stream_options":{"include_usage":true}`...)
	}
	for _, f := range b.extra {
		buf = append(buf, ',')
		buf = append(buf, f.quoted...)
		buf = append(buf, ':')
		buf = append(buf, f.val...)
	}
	buf = append(buf, '}')
	out.Body = buf
	return out, nil
}

// appendMessages writes msgs as json.Marshal does (map keys sorted,
// strings HTML-escaped) when each is a map of a string "role" and a string
// "content", the messages wire.Messages makes; false for any other shape.
// Marshalling maps through reflection was the largest part of send's own
// time per request (make bench-send's CPU per request).
func appendMessages(buf []byte, msgs []map[string]any) ([]byte, bool) {
	buf = append(buf, '[')
	for i, m := range msgs {
		role, ok1 := m["role"].(string)
		content, ok2 := m["content"].(string)
		if len(m) != 2 || !ok1 || !ok2 {
			return buf, false
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"content":`...)
		buf = appendString(buf, content)
		buf = append(buf, `,"role":`...)
		buf = appendString(buf, role)
		buf = append(buf, '}')
	}
	return append(buf, ']'), true
}

const hexDigits = "0123456789abcdef"

// plain are the ASCII bytes a JSON string holds as they are, HTML-safe.
var plain = func() (t [utf8.RuneSelf]bool) {
	for b := range t {
		t[b] = b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendString appends s as a JSON string exactly as json.Marshal writes
// it (FuzzAppendString): <, > and & escaped as HTML needs, U+2028 and
// U+2029 escaped, each invalid UTF-8 byte replaced by U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// object writes a JSON object's members in order.
type object struct {
	buf   []byte
	first bool
}

func newObject(buf []byte) *object { return &object{buf: append(buf, '{'), first: true} }

func (o *object) key(k string) {
	if !o.first {
		o.buf = append(o.buf, ',')
	}
	o.first = false
	kb, _ := json.Marshal(k) // a string always marshals
	o.buf = append(o.buf, kb...)
	o.buf = append(o.buf, ':')
}

func (o *object) value(k string, v any) error {
	vb, err := json.Marshal(v)
	if err != nil {
		return err
	}
	o.key(k)
	o.buf = append(o.buf, vb...)
	return nil
}

func (o *object) raw(k string, v []byte) {
	o.key(k)
	o.buf = append(o.buf, v...)
}

// tail writes stream (and for chat and completions stream_options) and
// --extra-body, and closes the object.
func (b *Builder) tail(o *object, streamOptions bool) []byte {
	o.raw("stream", strconv.AppendBool(nil, b.opts.Stream))
	if b.opts.Stream && streamOptions {
		// Usage arrives in a final chunk only when asked for.
		o.raw("stream_options", []byte(`{"include_usage":true}`))
	}
	for _, f := range b.extra {
		o.raw(f.key, f.val)
	}
	return append(o.buf, '}')
}

// completions is a /v1/completions body: the prompt is the one message's
// content (marker included), as a string.
func (b *Builder) completions(buf []byte, c *records.Conversation, turn int, msgs []map[string]any, out Built) (Built, error) {
	prompt, _ := msgs[0]["content"].(string)
	o := newObject(buf)
	if err := o.value("model", b.Model(c)); err != nil {
		return Built{}, err
	}
	var pv any = prompt
	if b.promptList {
		pv = []string{prompt}
	}
	if err := o.value("prompt", pv); err != nil {
		return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
	}
	if mt := c.Turns[turn].MaxTokens; mt > 0 {
		o.raw("max_tokens", strconv.AppendInt(nil, int64(mt), 10))
	}
	out.Body = b.tail(o, true)
	return out, nil
}

// inputItem is a Responses input message item, as AIPerf writes them.
type inputItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// responses is a /v1/responses body: a leading system message becomes
// "instructions" and the other messages "input" items, which is how the
// server turns them back into the messages compose rendered (vLLM's
// construct_input_messages); max_output_tokens. Usage comes with
// response.completed, so there are no stream_options.
func (b *Builder) responses(buf []byte, c *records.Conversation, turn int, msgs []map[string]any, out Built) (Built, error) {
	o := newObject(buf)
	if err := o.value("model", b.Model(c)); err != nil {
		return Built{}, err
	}
	if len(msgs) > 0 && msgs[0]["role"] == "system" {
		if err := o.value("instructions", msgs[0]["content"]); err != nil {
			return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
		}
		msgs = msgs[1:]
	}
	items := make([]inputItem, len(msgs))
	for i, m := range msgs {
		role, _ := m["role"].(string)
		items[i] = inputItem{Type: "message", Role: role, Content: m["content"]}
	}
	if err := o.value("input", items); err != nil {
		return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
	}
	if mt := c.Turns[turn].MaxTokens; mt > 0 {
		o.raw("max_output_tokens", strconv.AppendInt(nil, int64(mt), 10))
	}
	out.Body = b.tail(o, false)
	return out, nil
}

// newRecord fills the fields every record of turn `turn` shares.
func newRecord(c *records.Conversation, turn, pass int, built Built) records.Request {
	t := &c.Turns[turn]
	return records.Request{
		Kind:              records.KindRequest,
		SchemaVersion:     records.SchemaVersion,
		BenchmarkID:       c.BenchmarkID,
		Endpoint:          c.Endpoint,
		ConversationID:    c.ID,
		ConversationIndex: c.Index,
		Turn:              turn,
		Pass:              pass,
		TargetISL:         t.TargetISL,
		ExpectedISL:       t.WireISL,
		MaxTokens:         t.MaxTokens,
		Marker:            built.Marker,
		CacheBust:         c.CacheBust,
		Landing:           built.Landing,
		ComposedFor:       c.ComposedFor,
		Payload:           built.Body,
	}
}

// CheckEndpoint is the one endpoint of convs: each conversation's (absent
// = chat), which must be the same for all (one run posts to one URL) and,
// when want is set (send --endpoint), equal to it.
func CheckEndpoint(convs []records.Conversation, want endpoint.Kind) (endpoint.Kind, error) {
	got := want
	for i := range convs {
		k := convs[i].Endpoint.Or()
		switch {
		case want != "" && k != want:
			return "", fmt.Errorf("conversation %s was composed for --endpoint %s, not %s: its turns are sized for that endpoint's request; send it with --endpoint %s, or compose again", convs[i].ID, k, want, k)
		case got == "":
			got = k
		case k != got:
			return "", fmt.Errorf("conversation %s is for --endpoint %s but an earlier one for %s: one run sends to one endpoint; split the file", convs[i].ID, k, got)
		}
	}
	return got.Or(), nil
}
