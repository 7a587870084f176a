package send

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/wire"
)

// PayloadOptions shape the request body, for every endpoint.
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
	// ExactOSL asks each request's server for exactly its max_tokens
	// output tokens, in that server's parameters
	// (serverprofile.ExactOutput), written into the body; members
	// ExtraBody sets are left as the user gave them.
	ExactOSL bool
	// Server names the server whose output-length parameters are used
	// (send --server); "" is each conversation's (compose --server).
	Server string
	// ResponsesChain sends every Responses turn after the first with only
	// its new input and the previous answer's id (previous_response_id),
	// each with "store": true.
	ResponsesChain bool
}

// Builder builds the request bodies send puts on the wire: the request
// of wire.Build (its members written by request.AppendInput; internal/extract
// reads such bodies back) between the model and send's own fields. It is
// safe for concurrent use.
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
	// userOutput are the output-length members ExtraBody sets.
	userOutput []string
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
		for _, f := range fs {
			if slices.Contains(serverprofile.ExactOutputKeys(), f.key) {
				b.userOutput = append(b.userOutput, f.key)
			}
		}
	}
	if opts.ResponsesChain && slices.ContainsFunc(b.extra, func(f field) bool { return f.key == "store" }) {
		return nil, errors.New(`--extra-body may not set "store" with --responses-chain: a chained turn needs the previous answer stored`)
	}
	if opts.Server != "" {
		if _, err := serverprofile.ParseOutputServer(opts.Server); err != nil {
			return nil, fmt.Errorf("--server: %w", err)
		}
	}
	return b, nil
}

// OutputServer is the server whose output-length parameters c's bodies
// carry: --server, else the one c was composed for.
func (b *Builder) OutputServer(c *records.Conversation) string {
	if b.opts.Server != "" {
		return b.opts.Server
	}
	if c.Server != "" {
		return c.Server
	}
	return string(serverprofile.Default)
}

// outputLength is how turn t of c asks for its length, and the members
// to write for it.
func (b *Builder) outputLength(c *records.Conversation, maxTokens int) (*records.OutputLength, []serverprofile.OutputMember) {
	if maxTokens <= 0 {
		return nil, nil
	}
	ol := &records.OutputLength{Mode: records.OutputBestEffort, Server: b.OutputServer(c)}
	if !b.opts.ExactOSL {
		return ol, nil
	}
	members, ok := serverprofile.ExactOutput(ol.Server, c.Endpoint.OrChat(), maxTokens)
	if !ok {
		return ol, nil
	}
	ol.Mode = records.OutputExact
	var write []serverprofile.OutputMember
	for _, m := range members {
		if slices.Contains(b.userOutput, m.Key) {
			ol.UserSet = append(ol.UserSet, m.Key)
			ol.Mode = records.OutputUser
			continue
		}
		write = append(write, m)
		ol.Params = append(ol.Params, m.Key)
	}
	return ol, write
}

// OutputNotes are what stderr should say once about convs' output
// lengths: servers that cannot be told (their requests best effort),
// and members --extra-body set that send leaves as given.
func (b *Builder) OutputNotes(convs []records.Conversation) []string {
	if !b.opts.ExactOSL {
		return nil
	}
	var notes []string
	seen := map[string]bool{}
	user := false
	for i := range convs {
		c := &convs[i]
		mt := 0
		for _, t := range c.Turns {
			mt = max(mt, t.MaxTokens)
		}
		ol, _ := b.outputLength(c, max(mt, 1))
		switch {
		case ol.Mode == records.OutputBestEffort && !seen[ol.Server]:
			seen[ol.Server] = true
			why := "it has no parameter for it"
			if c.Endpoint.OrChat() == endpoint.Responses {
				why = "a Responses request: vLLM's /v1/responses reads no ignore_eos or min_tokens, and no other server's is known to"
			} else if ol.Server == string(serverprofile.Transformers) || ol.Server == string(serverprofile.AIPerf) {
				why = "--server " + ol.Server + " names a counting rule, not a server (give --server vllm, sglang, llamacpp, trtllm or dynamo)"
			}
			notes = append(notes, fmt.Sprintf("--exact-osl: server %s cannot be asked for an exact output length (%s): its requests are best effort (output_length.mode best_effort), the model stops when it likes", ol.Server, why))
		case ol.Mode == records.OutputUser && !user:
			user = true
			notes = append(notes, fmt.Sprintf("--exact-osl: --extra-body sets %s: kept as given, not made exact (output_length.user_set)", strings.Join(ol.UserSet, ", ")))
		}
	}
	return notes
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
	"previous_response_id":  "send --responses-chain names each turn's previous answer",
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
	// Output is how the body asks for its output length.
	Output *records.OutputLength
}

// RequestBody is the body exact counts.
func (b Built) RequestBody() []byte { return b.Body }

// Build serialises the body of turn `turn` of c on recycle pass `pass`;
// replies are the server's real replies to earlier turns (nil in a dry
// run: compose's synthetic ones are used).
func (b *Builder) Build(c *records.Conversation, turn, pass int, replies []string) (Built, error) {
	marker := wire.Marker(c, pass)
	req, err := wire.Build(c, turn, marker, replies)
	if errors.Is(err, cachebust.ErrDropped) {
		// AIPerf goes on without the marker; so do we, warning once.
		if b.warn != nil {
			b.warn(err)
		}
		marker = ""
		req, err = wire.Build(c, turn, "", replies)
	}
	if err != nil {
		return Built{}, err
	}
	out := Built{Marker: marker}
	if marker != "" {
		out.Landing, _ = cachebust.RouteMessages(c.CacheBust, req.Messages)
	}
	buf := make([]byte, 0, 256+len(c.Turns[turn].Text)*(turn+1)*2)
	// The keys are constants (and --extra-body's, checked JSON): written
	// as they are, not marshalled per request.
	buf = append(buf, `{"model":`...)
	buf = request.AppendString(buf, b.Model(c))
	if buf, err = req.AppendInput(buf, b.promptList); err != nil {
		return Built{}, fmt.Errorf("conversation %s turn %d: %w", c.ID, turn, err)
	}
	if mt := c.Turns[turn].MaxTokens; mt > 0 {
		buf = append(buf, `,"`...)
		switch c.Endpoint.OrChat() {
		case endpoint.Responses:
			buf = append(buf, "max_output_tokens"...)
		case endpoint.Completions:
			buf = append(buf, "max_tokens"...)
		default:
			buf = append(buf, b.opts.MaxTokensField...) // max_tokens or max_completion_tokens
		}
		buf = append(buf, `":`...)
		buf = strconv.AppendInt(buf, int64(mt), 10)
	}
	var osl []serverprofile.OutputMember
	out.Output, osl = b.outputLength(c, c.Turns[turn].MaxTokens)
	for _, m := range osl {
		buf = append(buf, `,"`...)
		buf = append(buf, m.Key...)
		buf = append(buf, `":`...)
		buf = append(buf, m.Value...)
	}
	buf = append(buf, `,"stream":`...)
	buf = strconv.AppendBool(buf, b.opts.Stream)
	if b.opts.Stream && c.Endpoint.OrChat() != endpoint.Responses {
		// Usage arrives in a final chunk only when asked for (a Responses
		// stream has it in response.completed).
		buf = append(buf, `,"stream_options":{"include_usage":true}`...)
	}
	for _, f := range b.extra {
		buf = append(buf, ',')
		buf = append(buf, f.quoted...)
		buf = append(buf, ':')
		buf = append(buf, f.val...)
	}
	out.Body = append(buf, '}')
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
		Server:            c.Server,
		ConversationID:    c.ID,
		ConversationIndex: c.Index,
		Turn:              turn,
		Pass:              pass,
		TargetISL:         t.TargetISL,
		ExpectedISL:       t.WireISL,
		MaxTokens:         t.MaxTokens,
		OutputLength:      built.Output,
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
		k := convs[i].Endpoint.OrChat()
		switch {
		case want != "" && k != want:
			return "", fmt.Errorf("conversation %s was composed for --endpoint %s, not %s: its turns are sized for that endpoint's request; send it with --endpoint %s, or compose again", convs[i].ID, k, want, k)
		case got == "":
			got = k
		case k != got:
			return "", fmt.Errorf("conversation %s is for --endpoint %s but an earlier one for %s: one run sends to one endpoint; split the file", convs[i].ID, k, got)
		}
	}
	return got.OrChat(), nil
}
