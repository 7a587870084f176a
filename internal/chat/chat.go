// Package chat renders chat templates the way Python transformers'
// apply_chat_template does, byte for byte, so that the prompt we count is the
// prompt the server tokenizes.
//
// The reference is Jinja2 in an ImmutableSandboxedEnvironment with
// trim_blocks and lstrip_blocks, the loopcontrols extension, the
// {% generation %} tag, the globals raise_exception and strftime_now, and a
// tojson filter calling json.dumps with ensure_ascii=False. Rendering uses a
// vendored, bounded copy of github.com/ardanlabs/jinja (internal/jinja):
// templates come from model repositories we do not control, so every render
// runs under Limits and a runaway template fails with an error wrapping
// ErrLimit instead of hanging or exhausting memory.
//
// Dates: templates that call strftime_now (Llama 3.x "Today Date", some
// Mistral and Gemma templates) render the current date, so the same request
// has a different token count from one day to the next. Pin the clock with
// RenderInput.Now — callers take it from --now via ParseNow or from the
// ISLKIT_NOW environment variable via NowFromEnv — whenever counts must be
// reproducible.
package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/chat/internal/jinja"
)

// ErrNoTemplate reports a model folder whose tokenizer has no chat template
// (chat_template absent or null); callers fall back to counting bare text.
var ErrNoTemplate = errors.New("chat: model has no chat template")

// ErrEmptyTemplate reports a chat template that is empty (chat_template "",
// an empty chat_template.jinja or --chat-template file): it would render
// every request as nothing.
var ErrEmptyTemplate = errors.New("the chat template is empty")

// ErrLimit is wrapped by render errors caused by an exceeded Limits bound.
var ErrLimit = jinja.ErrLimit

// Limits bounds one render; zero fields take DefaultLimits.
type Limits = jinja.Limits

// DefaultLimits are the bounds used when none are given.
var DefaultLimits = jinja.DefaultLimits

// RaiseError is the error a template raised with raise_exception (for
// instance "Conversation roles must alternate user/assistant/..."), as
// opposed to a template or engine failure.
type RaiseError struct{ Message string }

func (e *RaiseError) Error() string { return "chat template raised: " + e.Message }

// Template is a compiled chat template (or the set of named templates a
// tokenizer_config.json may carry). It is safe for concurrent use.
type Template struct {
	named   map[string]*jinja.Template // "default", "tool_use", ... or "default" alone
	special map[string]any             // special-token variables, as strings (and a list)
	limits  Limits
	// shared holds the values every render sees unchanged (string special
	// tokens, raise_exception, a live strftime_now), made once; lists
	// (additional_special_tokens), which templates may change, are copied
	// from lists for each render.
	shared map[string]jinja.Value
	lists  map[string][]jinja.Value
	// formats caches each named template's content formats (vLLM's and
	// SGLang's detection), computed on first use.
	formatOnce sync.Once
	formats    map[*jinja.Template][2]string

	// Renderer, when not "", is the renderer a server uses for the model
	// instead of this template (--renderer: "harmony", ...); ModelType is
	// the model's config.json model_type, from which a server chooses
	// one (serverprofile.RendererOf).
	Renderer  string
	ModelType string
	// Mistral is set for a Mistral-format model (tekken.json): its server
	// encodes requests with mistral-common, not with a Jinja template.
	Mistral *MistralFormat
}

// MistralFormat is what mistral-common's request encoding needs of a
// Mistral-format model: the tokenizer version ("v3", "v7", ...) and the
// ids of the special tokens by name ("[INST]", "<s>", ...).
type MistralFormat struct {
	Version string
	Special map[string]int
	// SentencePiece: a tokenizer.model.v* file, not a tekken.json.
	SentencePiece bool
}

// Option configures Compile and LoadFS.
type Option func(*Template)

// WithSpecialTokens sets the special-token variables (bos_token, eos_token,
// ...) the template sees. Values are strings, AddedToken-shaped maps
// ({"content": ...}) or, for additional_special_tokens, lists of either.
func WithSpecialTokens(tokens map[string]any) Option {
	return func(t *Template) {
		for k, v := range tokens {
			if s, ok := tokenText(v); ok {
				t.special[k] = s
			} else if list, ok := v.([]any); ok {
				out := make([]any, 0, len(list))
				for _, item := range list {
					if s, ok := tokenText(item); ok {
						out = append(out, s)
					}
				}
				t.special[k] = out
			}
		}
	}
}

// WithLimits overrides the execution bounds.
func WithLimits(l Limits) Option { return func(t *Template) { t.limits = l } }

// Compile compiles one template source.
func Compile(source string, opts ...Option) (*Template, error) {
	return compileNamed(map[string]string{"default": source}, opts)
}

func compileNamed(sources map[string]string, opts []Option) (*Template, error) {
	t := &Template{named: make(map[string]*jinja.Template, len(sources)), special: map[string]any{}}
	for name, src := range sources {
		jt, err := jinja.Compile(normalizeSource(src))
		if err != nil {
			return nil, fmt.Errorf("chat: compile template %q: %w", name, err)
		}
		t.named[name] = jt
	}
	for _, o := range opts {
		o(t)
	}
	t.shared = map[string]jinja.Value{
		"raise_exception": raiseException,
		"strftime_now":    strftimeNow(time.Time{}),
	}
	t.lists = map[string][]jinja.Value{}
	for k, v := range t.special {
		switch v := v.(type) {
		case string:
			t.shared[k] = jinja.NewString(v)
		case []any:
			items := make([]jinja.Value, len(v))
			for i, item := range v {
				items[i] = jinja.FromGoValue(item)
			}
			t.lists[k] = items
		}
	}
	return t, nil
}

// normalizeSource does what Jinja2's lexer does to the whole source before
// anything else: every \r\n, \r and \n becomes \n (newline_sequence), and one
// trailing newline is dropped (keep_trailing_newline is false).
func normalizeSource(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// Names lists the named templates, sorted ("default" for a single one).
func (t *Template) Names() []string {
	return slices.Sorted(maps.Keys(t.named))
}

// SpecialTokens returns the special-token variables given to the template
// (bos_token, eos_token, ..., additional_special_tokens), for provenance.
func (t *Template) SpecialTokens() map[string]any {
	out := make(map[string]any, len(t.special))
	for k, v := range t.special {
		out[k] = v
	}
	return out
}

// RenderInput is one apply_chat_template call.
//
// Messages is one shape, a template value: ObjectsValue of messages whose
// keys keep their order (what a server profile prepares), MessagesValue of
// role, content and tool calls, or DecodeJSON of a JSON array (keys in
// document order, as Python dicts keep them, which tojson and dict
// iteration expose). The zero Value renders as None.
//
// Tools and Documents accept []Object, []any, any other JSON-like Go
// value, or json.RawMessage (kept in document order); Go maps are rendered
// in sorted key order.
type RenderInput struct {
	Messages            Value
	Tools               any // nil renders as None
	Documents           any // nil renders as None
	AddGenerationPrompt bool
	// Kwargs are extra template variables (enable_thinking,
	// reasoning_effort, ...). As in transformers they are merged into the
	// context over the special tokens; they may not replace messages, tools,
	// documents or add_generation_prompt.
	Kwargs map[string]any
	// Now is what strftime_now formats; zero means time.Now().
	Now time.Time
	// FlattenContent reduces list-valued message content (OpenAI content
	// parts) to its "text" parts joined with "", dropping media parts, as
	// the wire reference (oracle/wire_ref.py) does for text-only counting.
	FlattenContent bool
	// TemplateName picks a named template; empty applies transformers' rule
	// ("tool_use" when Tools is set and present, else "default").
	TemplateName string
	// ContinueFinalMessage renders the conversation open-ended, as
	// transformers' continue_final_message does: the render is cut right
	// after the final message's content (see continueFinal). It may not be
	// combined with AddGenerationPrompt.
	ContinueFinalMessage bool
}

var reservedKeys = [...]string{"messages", "tools", "documents", "add_generation_prompt"}

// Object is a dict whose keys keep their order, as in Python: messages
// as []Object (ObjectsValue) render without a JSON round trip (a Go map
// would be iterated in sorted key order).
type Object []Field

// Field is one key of an Object. Value may be any value Render accepts,
// json.RawMessage and Object included.
type Field struct {
	Key   string
	Value any
}

// Message is a chat message with the keys request payloads give a
// template: role, content and, when not nil, tool_calls (JSON), in that
// order. MessagesValue renders them like the equivalent ObjectsValue, for
// less work.
type Message struct {
	Role      string
	Content   string
	ToolCalls json.RawMessage
}

// MessagesValue is msgs as the template sees them: dicts of role, content
// and, when not nil, tool_calls, in that order.
func MessagesValue(msgs []Message) Value {
	items := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDictSize(3)
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(m.Content))
		if m.ToolCalls != nil {
			d.AsDict().Set("tool_calls", jinja.FromGoValue(m.ToolCalls))
		}
		items[i] = d
	}
	return jinja.NewList(items)
}

// ObjectsValue is msgs as the template sees them: dicts whose keys keep
// the objects' order (values as Render's Tools accept them).
func ObjectsValue(msgs []Object) Value { return value(msgs) }

// value converts Render's inputs, with Object understood.
func value(v any) jinja.Value {
	switch v := v.(type) {
	case Object:
		d := jinja.NewDictSize(len(v))
		for _, f := range v {
			d.AsDict().Set(f.Key, value(f.Value))
		}
		return d
	case []Object:
		items := make([]jinja.Value, len(v))
		for i, o := range v {
			items[i] = value(o)
		}
		return jinja.NewList(items)
	case []any:
		items := make([]jinja.Value, len(v))
		for i, o := range v {
			items[i] = value(o)
		}
		return jinja.NewList(items)
	case string:
		return jinja.NewString(v)
	}
	return jinja.FromGoValue(v)
}

// Render renders the template over in.
func (t *Template) Render(in RenderInput) (string, error) {
	jt, ctx, final, err := t.context(in)
	if err != nil {
		return "", err
	}
	out, err := jt.RenderShared(t.shared, ctx, t.limits)
	if err != nil {
		return "", fmt.Errorf("chat: render: %w", err)
	}
	if in.ContinueFinalMessage {
		n, err := continueFinal(out, final)
		if err != nil {
			return "", err
		}
		out = out[:n]
	}
	return out, nil
}

// Append renders the template over in, appending the text to dst: a
// caller that only reads the text (to count its tokens) can reuse one
// buffer for every render.
func (t *Template) Append(dst []byte, in RenderInput) ([]byte, error) {
	jt, ctx, final, err := t.context(in)
	if err != nil {
		return dst, err
	}
	out, err := jt.AppendShared(dst, t.shared, ctx, t.limits)
	if err != nil {
		return dst, fmt.Errorf("chat: render: %w", err)
	}
	if in.ContinueFinalMessage {
		start := len(dst)
		n, err := continueFinal(string(out[start:]), final)
		if err != nil {
			return dst, err
		}
		out = out[:start+n]
	}
	return out, nil
}

// context picks the template for in and builds its variables.
func (t *Template) context(in RenderInput) (*jinja.Template, *jinja.Dict, string, error) {
	jt, err := t.pick(in)
	if err != nil {
		return nil, nil, "", err
	}
	if in.ContinueFinalMessage && in.AddGenerationPrompt {
		// transformers apply_chat_template refuses the pair
		// (tokenization_utils_base.py @598a3dc3).
		return nil, nil, "", ErrContinueWithGenerationPrompt
	}
	// String special tokens come from t.shared; lists are copied, as a
	// template may change them.
	ctx := jinja.NewDictSize(len(t.lists) + len(in.Kwargs) + 6).AsDict()
	for k, items := range t.lists {
		ctx.Set(k, jinja.NewList(slices.Clone(items)))
	}
	for k, v := range in.Kwargs {
		for _, r := range reservedKeys {
			if k == r {
				return nil, nil, "", fmt.Errorf("chat: kwarg %q collides with an apply_chat_template argument", k)
			}
		}
		ctx.Set(k, jinja.FromGoValue(v))
	}
	msgs := in.Messages
	if msgs.IsUndefined() {
		msgs = jinja.None() // no messages: None, as apply_chat_template's default
	}
	if in.FlattenContent {
		msgs = flattenContent(msgs)
	}
	final := ""
	if in.ContinueFinalMessage {
		// Taken before the render: a template's top-level set may rebind
		// messages, but transformers cuts at the caller's final message.
		if final, err = finalMessageText(msgs); err != nil {
			return nil, nil, "", err
		}
	}
	ctx.Set("messages", msgs)
	ctx.Set("tools", value(in.Tools))
	ctx.Set("documents", value(in.Documents))
	ctx.Set("add_generation_prompt", jinja.NewBool(in.AddGenerationPrompt))
	if !in.Now.IsZero() {
		ctx.Set("strftime_now", strftimeNow(in.Now))
	}
	return jt, ctx, final, nil
}

// strftimeNow formats now, or the time of the call when now is zero.
func strftimeNow(now time.Time) jinja.Value {
	return jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 || !args[0].IsString() {
			return jinja.Undefined(), errors.New("strftime_now() takes one format string")
		}
		at := now
		if at.IsZero() {
			at = time.Now()
		}
		return jinja.NewString(Strftime(at, args[0].AsString())), nil
	})
}

var raiseException = jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	msg := ""
	if len(args) > 0 {
		if args[0].IsString() {
			msg = args[0].AsString()
		} else {
			msg = args[0].String()
		}
	}
	return jinja.Undefined(), &RaiseError{Message: msg}
})

// pick mirrors transformers' PreTrainedTokenizerBase.get_chat_template.
func (t *Template) pick(in RenderInput) (*jinja.Template, error) {
	if in.TemplateName != "" {
		if jt, ok := t.named[in.TemplateName]; ok {
			return jt, nil
		}
		return nil, fmt.Errorf("chat: no chat template named %q (have %s)", in.TemplateName, strings.Join(t.Names(), ", "))
	}
	if len(t.named) == 1 {
		for _, jt := range t.named {
			return jt, nil
		}
	}
	if in.Tools != nil {
		if jt, ok := t.named["tool_use"]; ok {
			return jt, nil
		}
	}
	if jt, ok := t.named["default"]; ok {
		return jt, nil
	}
	return nil, fmt.Errorf("chat: model has several chat templates (%s) and none is named default", strings.Join(t.Names(), ", "))
}

// ParseNow parses a --now value: 2025-07-10T12:00:00 (local wall clock, like
// Python's naive datetime), RFC 3339, or a bare date 2025-07-10.
func ParseNow(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if err == nil {
			break
		}
		t, err = time.ParseInLocation(layout, s, time.Local)
	}
	if err == nil && t.IsZero() {
		// The zero time means "not pinned" everywhere: taking it would
		// silently read the clock.
		return time.Time{}, fmt.Errorf("chat: %q is the zero time, which means the clock; give a later time", s)
	}
	if err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("chat: cannot parse time %q (want 2025-07-10T12:00:00 or RFC 3339)", s)
}

// NowEnv is the environment variable NowFromEnv reads.
const NowEnv = "ISLKIT_NOW"

// NowFromEnv returns the time pinned by $ISLKIT_NOW, or the zero time (meaning
// "the real clock") when it is unset or empty.
func NowFromEnv() (time.Time, error) {
	s := os.Getenv(NowEnv)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := ParseNow(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", NowEnv, err)
	}
	return t, nil
}

// ResolveNow is the clock templates see: the --now flag when given, else
// $ISLKIT_NOW, else zero (the real clock).
func ResolveNow(flag string) (time.Time, error) {
	if flag == "" {
		return NowFromEnv()
	}
	now, err := ParseNow(flag)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now %s: %w", flag, err)
	}
	return now, nil
}

// tokenText returns a special token's text: a plain string or the content of
// an AddedToken object.
func tokenText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case map[string]any:
		s, ok := v["content"].(string)
		return s, ok
	case json.RawMessage:
		var x any
		if json.Unmarshal(v, &x) == nil {
			return tokenText(x)
		}
	}
	return "", false
}

// flattenContent returns a copy of msgs whose list contents are reduced to
// text; a message without content gets content None, like Python's
// dict(m, content=m.get("content")).
func flattenContent(msgs jinja.Value) jinja.Value {
	if !msgs.IsList() {
		return msgs
	}
	items := msgs.AsList().Items
	out := make([]jinja.Value, len(items))
	for i, m := range items {
		out[i] = m
		if !m.IsDict() {
			continue
		}
		src := m.AsDict()
		cp := jinja.NewDict()
		for _, e := range src.Entries() {
			cp.AsDict().Set(e.Key, e.Value)
		}
		content, ok := src.Get("content")
		switch {
		case !ok:
			content = jinja.None()
		case content.IsList():
			var b strings.Builder
			for _, part := range content.AsList().Items {
				if !part.IsDict() {
					continue
				}
				if typ, _ := part.AsDict().Get("type"); typ.IsString() && typ.AsString() == "text" {
					if txt, _ := part.AsDict().Get("text"); txt.IsString() {
						b.WriteString(txt.AsString())
					}
				}
			}
			content = jinja.NewString(b.String())
		}
		cp.AsDict().Set("content", content)
		out[i] = cp
	}
	return jinja.NewList(out)
}

// Value is a decoded template value. Pass one in RenderInput (from
// DecodeJSON) to decode a request once and render it many times.
type Value = jinja.Value

// DecodeJSON decodes JSON into a Value, keeping object keys in document order
// and integers distinct from floats, as Python's json module does.
func DecodeJSON(data []byte) (Value, error) { return jinja.FromJSON(data) }
