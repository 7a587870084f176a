package send

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
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
	// The keys are constants (and --extra-body's, checked JSON): written
	// as they are, not marshalled per request.
	buf = append(buf, `{"model":`...)
	mb, err := json.Marshal(b.Model(c))
	if err != nil {
		return Built{}, err
	}
	buf = append(buf, mb...)
	buf = append(buf, `,"messages":`...)
	m, err := json.Marshal(msgs)
	if err != nil {
		return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
	}
	buf = append(buf, m...)
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

// newRecord fills the fields every record of turn `turn` shares.
func newRecord(c *records.Conversation, turn, pass int, built Built) records.Request {
	t := &c.Turns[turn]
	return records.Request{
		Kind:              records.KindRequest,
		SchemaVersion:     records.SchemaVersion,
		BenchmarkID:       c.BenchmarkID,
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
		Payload:           built.Body,
	}
}
