package serverprofile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// The Mistral renderer: what vLLM prefills for a chat request to a
// Mistral-format model (tokenizer_mode mistral). vLLM's online renderer
// truncates tool-call ids to their last 9 characters
// (vllm/tokenizers/mistral.py truncate_tool_call_ids), then
// MistralTokenizer.apply_chat_template hands the messages and tools to
// mistral-common 1.13.1 (ChatCompletionRequest.from_openai, the
// InstructRequestNormalizer of the tokenizer version, then
// InstructTokenizerV3/V7.encode_instruct). Special tokens are placed by
// id; every text is encoded on its own, special tokens never parsed.
//
// Reproduced: tokenizer versions v3 and v7 (text content, system
// prompts, tools, tool calls and results, consecutive messages of a
// role, continue_final_message), and images in user messages where the
// model's tekken.json has image settings (mistral_images.go). Not
// reproduced, and refused by name: v1 (SentencePiece only), v11 and
// later (their [ARGS]/[CALL_ID] and think chunks), audio, and
// mistral-common's validation beyond the rules below.

// mistralRule names the refusals of this renderer.
const mistralRule = "mistral"

// mistralVariant is what a server does with the messages before
// mistral-common sees them. vLLM (above) truncates tool-call ids and
// hands over the request as sent. SGLang 0.5.23 loads a bare tekken.json
// with transformers' MistralCommonTokenizer and renders its own
// preprocessed messages with that tokenizer's
// apply_chat_template(tokenize=True) (serving_chat.py
// _apply_jinja_template, "string" content format;
// docs/reference/server-preprocessing.md §7.1):
//   - text parts joined with " ", empty ones too
//     (process_content_for_template_format), image parts not reproduced;
//   - tool-call arguments parsed (normalize_assistant_tool_call_arguments:
//     not JSON, or not an object, a 400) and written again by
//     mistral-common's json.dumps (ASCII escapes); absent or null: "{}";
//   - tool-call ids kept whole (mistral-common then wants 9 characters);
//   - a final assistant message made a user message of its text, its tool
//     calls dropped (_handle_last_assistant_message); with
//     continue_final_message it is left out and its text encoded on its
//     own after the prompt (_append_assistant_prefix_to_prompt_ids);
//     add_generation_prompt from the body is not read;
//   - no tools under tool_choice "none", only the named one under a named
//     tool_choice (_process_messages).
type mistralVariant struct {
	server Profile
	sglang bool
}

var (
	mistralVLLM   = mistralVariant{server: VLLM}
	mistralSGLang = mistralVariant{server: SGLang, sglang: true}
)

// mistralVariantOf is the variant the rules r run; a mix of vLLM's and
// SGLang's handling is not reproduced.
func mistralVariantOf(r Rules) (mistralVariant, error) {
	v := mistralVLLM
	if r[0] == SGLang {
		v = mistralSGLang
	}
	for _, p := range r[1:] {
		if p != r[0] && (p == SGLang || r[0] == SGLang) {
			return mistralVariant{}, refuse(r[0], mistralRule, "a mix of vLLM's and SGLang's Mistral message handling is not reproduced")
		}
	}
	return v, nil
}

type mistralMessage struct {
	role      string
	content   string // text chunks aggregated
	toolCalls []mistralToolCall
	callID    string // tool message's tool_call_id
	name      string // tool message's name (v2 writes it), "" for none
	hasName   bool
	prefix    bool
	// chunks is a user message's content where it holds images (nil:
	// content is all of it).
	chunks []mistralChunk
}

type mistralToolCall struct {
	id, name, arguments string
}

func renderMistral(sv mistralVariant, ex *extract.Inputs, f *chat.MistralFormat, vis *Vision, dst []byte) (Prompt, error) {
	// v2 (InstructTokenizerV2) is v3 but for its tool messages and tool
	// calls: see below; the rest goes as v3 (lv).
	v2 := f.Version == "v2"
	v := f.Version
	if v2 {
		v = "v3"
	}
	if v != "v3" && v != "v7" {
		return Prompt{}, refuse(sv.server, mistralRule, "mistral-common's tokenizer version %s is not reproduced (v2, v3 and v7 are)", f.Version)
	}
	msgsRaw, ok := ex.Body.Get("messages")
	if !ok {
		return Prompt{}, refuse(sv.server, mistralRule, `only chat bodies with "messages" are reproduced for Mistral-format models`)
	}
	elems, err := jsonobj.Elements(msgsRaw)
	if err != nil {
		return Prompt{}, fmt.Errorf(`mistral: "messages": %w`, err)
	}
	if len(elems) == 0 {
		return Prompt{}, refuse(sv.server, mistralRule, "no messages")
	}
	msgs := make([]mistralMessage, 0, len(elems))
	images := &mistralImages{vis: vis}
	for i, e := range elems {
		m, err := mistralConvert(sv, e, i, images)
		if IsRefusal(err) {
			return Prompt{}, err
		}
		if err != nil {
			return Prompt{}, refuse(sv.server, mistralRule, "messages[%d]: %v", i, err)
		}
		msgs = append(msgs, m)
	}
	continueFinal := string(bytes.TrimSpace(rawField(ex.Body, "continue_final_message"))) == "true"
	addGen := true
	if raw, ok := ex.Body.Get("add_generation_prompt"); ok && string(bytes.TrimSpace(raw)) == "false" {
		addGen = false
	}
	// SGLang's _handle_last_assistant_message, then mistral-common with
	// add_generation_prompt on.
	assistantPrefix := ""
	if sv.sglang {
		if last := len(msgs) - 1; msgs[last].role == "assistant" {
			if continueFinal {
				assistantPrefix = msgs[last].content
				msgs = msgs[:last]
			} else {
				msgs[last] = mistralMessage{role: "user", content: msgs[last].content}
			}
		}
		continueFinal, addGen = false, true
		if len(msgs) == 0 {
			return Prompt{}, refuse(sv.server, mistralRule, "no messages left before the final assistant message")
		}
	}
	last := msgs[len(msgs)-1].role
	// vllm/tokenizers/mistral.py _validate_apply_chat_template_args.
	switch {
	case addGen && continueFinal:
		return Prompt{}, refuse(sv.server, mistralRule, "add_generation_prompt and continue_final_message together")
	case addGen && last == "assistant":
		return Prompt{}, refuse(sv.server, mistralRule, "a final assistant message with add_generation_prompt (use continue_final_message)")
	case continueFinal && last != "assistant":
		return Prompt{}, refuse(sv.server, mistralRule, "continue_final_message without a final assistant message")
	}
	if continueFinal {
		msgs[len(msgs)-1].prefix = true
	}
	if err := mistralValidate(msgs, continueFinal); err != nil {
		return Prompt{}, refuse(sv.server, mistralRule, "%v", err)
	}
	tools, err := mistralTools(sv, ex.Body)
	if err != nil {
		return Prompt{}, refuse(sv.server, mistralRule, "%v", err)
	}

	systemPrompt, hasSystem, msgs := mistralNormalize(msgs, v)
	if v2 {
		if err := mistralV2ToolResults(msgs); err != nil {
			return Prompt{}, refuse(sv.server, mistralRule, "%v", err)
		}
	}

	w := mistralWriter{dst: dst, ids: f.Special}
	if err := w.special("<s>"); err != nil {
		return Prompt{}, err
	}
	lastUser := -1
	for i, m := range msgs {
		if m.role == "user" {
			lastUser = i
		}
	}
	for i, m := range msgs {
		var err error
		switch m.role {
		case "user":
			if i == lastUser && len(tools) > 0 {
				err = w.special("[AVAILABLE_TOOLS]")
				w.text(tools)
				err = firstErr(err, w.special("[/AVAILABLE_TOOLS]"))
			}
			err = firstErr(err, w.special("[INST]"))
			system := ""
			if v == "v3" && i == lastUser && hasSystem && systemPrompt != "" {
				system = systemPrompt
			}
			if m.chunks != nil {
				err = firstErr(err, w.userChunks(m.chunks, system))
			} else if system != "" {
				w.text(system + "\n\n" + m.content)
			} else {
				w.text(m.content)
			}
			err = firstErr(err, w.special("[/INST]"))
		case "system": // v7 only: v3 folds system prompts into the last user message
			err = w.special("[SYSTEM_PROMPT]")
			w.text(m.content)
			err = firstErr(err, w.special("[/SYSTEM_PROMPT]"))
		case "tool":
			if v2 {
				// InstructTokenizerV2.encode_tool_message: nothing before
				// the last user message; else a list of one result with
				// its name (null without) and no call id.
				if i < lastUser {
					continue
				}
				var b strings.Builder
				b.WriteString(`[{"name": `)
				if m.hasName {
					quoteJSON(&b, m.name)
				} else {
					b.WriteString("null")
				}
				b.WriteString(`, "content": `)
				pyDumpsJSONOrString(&b, m.content)
				b.WriteString("}]")
				err = w.special("[TOOL_RESULTS]")
				w.text(b.String())
				err = firstErr(err, w.special("[/TOOL_RESULTS]"))
				break
			}
			err = w.special("[TOOL_RESULTS]")
			if v == "v3" {
				var b strings.Builder
				b.WriteString(`{"content": `)
				pyDumpsJSONOrString(&b, m.content)
				b.WriteString(`, "call_id": `)
				quoteJSON(&b, m.callID)
				b.WriteString("}")
				w.text(b.String())
			} else {
				w.text(m.callID)
				err = firstErr(err, w.special("[TOOL_CONTENT]"))
				w.text(m.content)
			}
			err = firstErr(err, w.special("[/TOOL_RESULTS]"))
		case "assistant":
			switch {
			case len(m.toolCalls) > 0 && m.content != "" && v == "v3":
				return Prompt{}, refuse(sv.server, mistralRule, "an assistant message with both content and tool calls (tokenizer v3)")
			case len(m.toolCalls) == 0 && m.content == "":
				return Prompt{}, refuse(sv.server, mistralRule, "an assistant message with neither content nor tool calls")
			}
			if v2 && len(m.toolCalls) > 0 && i < lastUser {
				continue // v2 drops tool calls before the last user message, </s> too
			}
			if m.content != "" {
				w.text(strings.TrimRight(m.content, " "))
			}
			if len(m.toolCalls) > 0 {
				err = w.special("[TOOL_CALLS]")
				var b strings.Builder
				b.WriteByte('[')
				for k, c := range m.toolCalls {
					if k > 0 {
						b.WriteString(", ")
					}
					b.WriteString(`{"name": `)
					quoteJSON(&b, c.name)
					b.WriteString(`, "arguments": `)
					pyDumpsJSONOrString(&b, c.arguments)
					if c.id != "" && c.id != "null" && !v2 {
						b.WriteString(`, "id": `)
						quoteJSON(&b, c.id)
					}
					b.WriteByte('}')
				}
				b.WriteByte(']')
				w.text(b.String())
			}
			if !m.prefix {
				err = firstErr(err, w.special("</s>"))
			}
		}
		if err != nil {
			return Prompt{}, err
		}
	}
	if assistantPrefix != "" {
		w.text(assistantPrefix)
	}
	imgs, err := mistralExpand(images, w.order, ex, f)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Text: w.dst, Fixed: w.fixed, Cuts: w.cuts, Images: imgs}, nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// mistralWriter appends a prompt's text, its special tokens as Fixed
// spans of their names.
type mistralWriter struct {
	dst   []byte
	fixed []FixedToken
	ids   map[string]int
	cuts  []int // where a text chunk ends: the next is encoded on its own
	order []int // the images placed, in prompt order (mistralImages refs, 1-based)
}

func (w *mistralWriter) special(name string) error {
	id, ok := w.ids[name]
	if !ok {
		return fmt.Errorf("mistral: the tokenizer has no special token %s", name)
	}
	start := len(w.dst)
	w.dst = append(w.dst, name...)
	w.fixed = append(w.fixed, FixedToken{Start: start, End: len(w.dst), ID: id})
	return nil
}

func (w *mistralWriter) text(s string) { w.dst = append(w.dst, s...) }

// mistralConvert is mistral-common's from_openai of one message, after
// vLLM's truncate_tool_call_ids.
func mistralConvert(sv mistralVariant, raw json.RawMessage, msg int, images *mistralImages) (mistralMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return mistralMessage{}, fmt.Errorf("not an object")
	}
	o, err := jsonobj.Members(raw)
	if err != nil {
		return mistralMessage{}, err
	}
	m := mistralMessage{role: strField(o, "role")}
	switch m.role {
	case "developer":
		m.role = "system"
	case "system", "user", "assistant", "tool":
	default:
		return m, fmt.Errorf("role %q is not one mistral-common knows", m.role)
	}
	if m.content, m.chunks, err = mistralContent(sv, o, m.role, msg, images); err != nil {
		return m, err
	}
	switch m.role {
	case "tool":
		m.callID = strField(o, "tool_call_id")
		if !sv.sglang {
			m.callID = truncateCallID(m.callID)
		}
		if raw, ok := o.Get("name"); ok && jsonobj.IsString(raw) {
			m.name, m.hasName = strField(o, "name"), true
		}
	case "assistant":
		calls, err := toolCalls(o)
		if err != nil {
			return m, err
		}
		for k, c := range calls {
			fn, _ := harmonyObject(rawField(c, "function"))
			tc := mistralToolCall{id: strField(c, "id"), name: strField(fn, "name")}
			if !sv.sglang {
				tc.id = truncateCallID(tc.id)
			}
			if tc.name == "" {
				return m, fmt.Errorf("tool_calls[%d].function.name: missing", k)
			}
			if raw := rawField(fn, "arguments"); raw != nil && string(bytes.TrimSpace(raw)) != "null" {
				s, err := jsonobj.String(raw)
				if err != nil {
					return m, fmt.Errorf("tool_calls[%d].function.arguments: not a string", k)
				}
				tc.arguments = s
				if sv.sglang {
					if tc.arguments, err = sglangToolArguments(s); err != nil {
						return m, fmt.Errorf("tool_calls[%d].function.arguments: %v", k, err)
					}
				}
			} else if sv.sglang {
				tc.arguments = "{}" // mistral-common's FunctionCall: None is "{}"
			}
			if tc.id == "" {
				tc.id = "null" // mistral-common's ToolCall default
			}
			m.toolCalls = append(m.toolCalls, tc)
		}
	}
	return m, nil
}

// truncateCallID is vLLM's truncate_tool_call_ids: the last 9 characters.
func truncateCallID(id string) string {
	r := []rune(id)
	if len(r) > 9 {
		return string(r[len(r)-9:])
	}
	return id
}

// mistralContent is a message's text: a string, null, or text parts
// joined as mistral-common's _aggregate_content_chunks_impl joins the
// chunks of one message ("\n\n", empty parts skipped); and, where it has
// image_url parts, its chunks in order (images collects them).
func mistralContent(sv mistralVariant, o jsonobj.Object, role string, msg int, images *mistralImages) (string, []mistralChunk, error) {
	raw := bytes.TrimSpace(rawField(o, "content"))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		s, err := jsonobj.String(raw)
		return s, nil, err
	}
	parts, err := jsonobj.Elements(raw)
	if err != nil {
		return "", nil, fmt.Errorf("content: neither a string nor a list of parts")
	}
	var texts []string
	var chunks []mistralChunk
	hasImage := false
	for k, p := range parts {
		po, err := harmonyObject(p)
		if err != nil {
			return "", nil, fmt.Errorf("content[%d]: not an object", k)
		}
		switch t := strField(po, "type"); {
		case sv.sglang && t == "text":
			texts = append(texts, strField(po, "text"))
		case sv.sglang:
			return "", nil, fmt.Errorf("content[%d]: a %q part (only text parts are reproduced for Mistral-format models under SGLang)", k, t)
		case t == "text":
			if s := strField(po, "text"); s != "" {
				texts = append(texts, s)
				chunks = append(chunks, mistralChunk{text: s})
			}
		case t == "image_url":
			c, err := images.part(po, role, msg, k)
			if err != nil {
				return "", nil, err
			}
			chunks = append(chunks, c)
			hasImage = true
		default:
			return "", nil, fmt.Errorf("content[%d]: a %q part (only text and image_url parts are reproduced for Mistral-format models)", k, t)
		}
	}
	if !hasImage {
		chunks = nil
	}
	if sv.sglang {
		return strings.Join(texts, " "), nil, nil
	}
	return strings.Join(texts, "\n\n"), chunks, nil
}

// mistralValidate is the part of mistral-common's MistralRequestValidator
// (ValidationMode.test) that the reproduced requests meet: the order of
// roles, the final message, tool-call ids.
func mistralValidate(msgs []mistralMessage, continueFinal bool) error {
	prev := ""
	for i, m := range msgs {
		if m.role == "system" && (prev == "assistant" || prev == "tool") {
			return fmt.Errorf("messages[%d]: unexpected role 'system' after role '%s'", i, prev)
		}
		if m.role == "tool" && prev != "assistant" && prev != "tool" {
			return fmt.Errorf("messages[%d]: unexpected role 'tool' after role '%s'", i, prev)
		}
		if m.role == "assistant" && len(m.toolCalls) > 0 {
			for _, c := range m.toolCalls {
				if !validCallID(c.id) {
					return fmt.Errorf("messages[%d]: tool call id %q is not 9 letters and digits", i, c.id)
				}
			}
		}
		prev = m.role
	}
	switch last := msgs[len(msgs)-1].role; {
	case last == "user" || last == "tool":
	case last == "assistant" && continueFinal:
	default:
		return fmt.Errorf("the last message is %s, not user or tool", last)
	}
	return nil
}

func validCallID(id string) bool {
	if id == "null" {
		return true
	}
	if len(id) != 9 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// mistralNormalize is InstructRequestNormalizer (v3) or
// InstructRequestNormalizerV7 (v7): consecutive user and assistant
// messages merged ("\n\n" between their texts), tool messages kept one
// by one (v3: their content and every tool call's arguments
// JSON-normalised, "" made "{}"), system messages folded into one system
// prompt (v3) or kept in place (v7), and an empty user message first
// when the conversation does not start with one (v3) or is empty.
func mistralNormalize(in []mistralMessage, v string) (systemPrompt string, hasSystem bool, out []mistralMessage) {
	var sys []string
	for i := 0; i < len(in); {
		j := i
		for j < len(in) && in[j].role == in[i].role {
			j++
		}
		group := in[i:j]
		switch in[i].role {
		case "system":
			for _, m := range group {
				if v == "v3" {
					if m.content != "" {
						sys = append(sys, m.content)
					}
				} else {
					out = append(out, mistralMessage{role: "system", content: m.content})
				}
			}
		case "tool":
			for _, m := range group {
				if v == "v3" {
					m.content = normalizeJSONContent(m.content)
				}
				out = append(out, m)
			}
		case "user", "assistant":
			agg := mistralMessage{role: in[i].role}
			var texts []string
			for _, m := range group {
				if m.chunks != nil {
					agg.chunks = mistralAggregate(group)
				}
				if m.content != "" {
					texts = append(texts, m.content)
				}
				for _, c := range m.toolCalls {
					c.arguments = normalizeJSONContent(c.arguments)
					agg.toolCalls = append(agg.toolCalls, c)
				}
				agg.prefix = agg.prefix || m.prefix
			}
			agg.content = strings.Join(texts, "\n\n")
			out = append(out, agg)
		}
		i = j
	}
	if len(out) == 0 || (v == "v3" && out[0].role != "user") {
		out = append([]mistralMessage{{role: "user"}}, out...)
	}
	if len(sys) > 0 {
		return strings.Join(sys, "\n\n"), true, out
	}
	return "", false, out
}

// normalizeJSONContent is the normaliser's _normalize_json_content: ""
// is "{}", JSON is re-serialised by Python's json.dumps, anything else
// is kept.
func normalizeJSONContent(s string) string {
	if s == "" {
		return "{}"
	}
	var b strings.Builder
	if !pyDumpsJSON(&b, s) {
		return s
	}
	return b.String()
}

// mistralTools is json.dumps of the tools as mistral-common's Tool
// models dump them (type, then function's name, description, parameters;
// strict left out), "" when the body has none.
func mistralTools(sv mistralVariant, body jsonobj.Object) (string, error) {
	raw := bytes.TrimSpace(rawField(body, "tools"))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return "", fmt.Errorf("tools: not a list")
	}
	if sv.sglang {
		elems = sglangChosenTools(body, elems)
	}
	if len(elems) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range elems {
		t, err := harmonyObject(e)
		if err != nil {
			return "", fmt.Errorf("tools[%d]: not an object", i)
		}
		if typ := strField(t, "type"); typ != "function" && typ != "" {
			return "", fmt.Errorf("tools[%d].type: %q is not function", i, typ)
		}
		fn, err := harmonyObject(rawField(t, "function"))
		if err != nil {
			return "", fmt.Errorf("tools[%d].function: not an object", i)
		}
		name := strField(fn, "name")
		if !validFunctionName(name) {
			return "", fmt.Errorf("tools[%d].function.name: %q must be a-z, A-Z, 0-9, underscores and dashes, at most 256 characters", i, name)
		}
		params := bytes.TrimSpace(rawField(fn, "parameters"))
		if len(params) == 0 || params[0] != '{' {
			return "", fmt.Errorf("tools[%d].function.parameters: missing or not an object", i)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"type": "function", "function": {"name": `)
		quoteJSON(&b, name)
		b.WriteString(`, "description": `)
		quoteJSON(&b, strField(fn, "description"))
		b.WriteString(`, "parameters": `)
		if !pyDumpsJSON(&b, string(params)) {
			return "", fmt.Errorf("tools[%d].function.parameters: not valid JSON", i)
		}
		b.WriteString("}}")
	}
	b.WriteByte(']')
	return b.String(), nil
}

func validFunctionName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// pyDumpsJSONOrString writes json.dumps of s parsed as JSON, or of the
// string s when it is not JSON (mistral-common's _parse_json_content).
func pyDumpsJSONOrString(b *strings.Builder, s string) {
	var t strings.Builder
	if pyDumpsJSON(&t, s) {
		b.WriteString(t.String())
		return
	}
	quoteJSON(b, s)
}

// pyDumpsJSON writes Python's json.dumps(json.loads(s),
// ensure_ascii=False) and reports whether s is JSON.
func pyDumpsJSON(b *strings.Builder, s string) bool {
	if !json.Valid([]byte(s)) {
		return false
	}
	v, err := decodeOrdered([]byte(s), 0)
	if err != nil {
		return false
	}
	pyDump(b, v)
	return true
}

func pyDump(b *strings.Builder, v *ordered) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			quoteJSON(b, k)
			b.WriteString(": ")
			pyDump(b, v.vals[i])
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range v.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			pyDump(b, e)
		}
		b.WriteByte(']')
	case 's':
		quoteJSON(b, v.str)
	case 'b':
		b.WriteString(v.str)
	case 'z':
		b.WriteString("null")
	case 'n':
		b.WriteString(pyNumber(v.str))
	}
}

// pyNumber is a JSON number as Python's json.loads then json.dumps
// write it: an integer as the int it is, any other as float's repr.
func pyNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.TrimLeft(lit, "-0") == "" {
			return "0"
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return lit
	}
	return pyFloatRepr(f)
}

// pyFloatRepr is Python's repr of a float: the shortest digits, in
// fixed notation for exponents from -4 to 15, else as d.ddde±XX.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// mistralV2ToolResults is InstructTokenizerV2._validate_tool_results: from
// the last user message on, an assistant turn with tool calls takes one
// tool result at most.
func mistralV2ToolResults(msgs []mistralMessage) error {
	lastUser := -1
	for i, m := range msgs {
		if m.role == "user" {
			lastUser = i
		}
	}
	calls, results := false, 0
	for i, m := range msgs {
		if i < lastUser {
			continue
		}
		switch m.role {
		case "assistant":
			calls, results = len(m.toolCalls) > 0, 0
		case "tool":
			if calls {
				if results++; results > 1 {
					return fmt.Errorf("tokenizer v2 does not support multiple tool results for one assistant turn")
				}
			}
		default:
			calls, results = false, 0
		}
	}
	return nil
}

// sglangChosenTools are the tools SGLang's _process_messages passes on:
// none under tool_choice "none", only those of the named function under
// a named tool_choice, else all.
func sglangChosenTools(body jsonobj.Object, tools []json.RawMessage) []json.RawMessage {
	raw := bytes.TrimSpace(rawField(body, "tool_choice"))
	if len(raw) == 0 || string(raw) == "null" {
		return tools
	}
	if raw[0] == '"' {
		if s, _ := jsonobj.String(raw); s == "none" {
			return nil
		}
		return tools
	}
	choice, err := harmonyObject(raw)
	if err != nil {
		return tools // the request's validation is not reproduced here
	}
	fn, _ := harmonyObject(rawField(choice, "function"))
	name := strField(fn, "name")
	var kept []json.RawMessage
	for _, t := range tools {
		o, err := harmonyObject(t)
		if err != nil {
			kept = append(kept, t) // mistralTools reports it
			continue
		}
		if f, _ := harmonyObject(rawField(o, "function")); strField(f, "name") == name {
			kept = append(kept, t)
		}
	}
	return kept
}

// sglangToolArguments is an assistant tool call's arguments as SGLang
// hands them to mistral-common: parsed (orjson; not JSON, or not an
// object, is SGLang's 400), then written by mistral-common's FunctionCall
// with json.dumps' defaults (", ", ": ", non-ASCII escaped).
func sglangToolArguments(s string) (string, error) {
	if !json.Valid([]byte(s)) || !pairedSurrogates(s) {
		return "", fmt.Errorf("must be valid JSON")
	}
	v, err := decodeOrdered([]byte(s), 0)
	if err != nil {
		return "", err
	}
	if v.kind != 'o' {
		return "", fmt.Errorf("must be a JSON object")
	}
	if err := orjsonNumbers(v); err != nil {
		return "", err
	}
	var b strings.Builder
	pyDump(&b, v)
	return asciiEscape(b.String()), nil
}

// orjsonNumbers makes the numbers what orjson parses them as where it
// parts from Python's json: an integer beyond 64 bits a float; a number
// out of float range an error ("number is infinity").
func orjsonNumbers(v *ordered) error {
	switch v.kind {
	case 'o', 'a':
		for _, e := range v.vals {
			if err := orjsonNumbers(e); err != nil {
				return err
			}
		}
	case 'n':
		isInt := !strings.ContainsAny(v.str, ".eE")
		if isInt {
			if _, err := strconv.ParseInt(v.str, 10, 64); err == nil {
				return nil
			}
			if _, err := strconv.ParseUint(v.str, 10, 64); err == nil {
				return nil
			}
		}
		f, err := strconv.ParseFloat(v.str, 64)
		if (err != nil && !math.IsInf(f, 0)) || math.IsInf(f, 0) {
			return fmt.Errorf("must be valid JSON (orjson: the number %s is infinity as a double)", v.str)
		}
		if isInt {
			v.str = strconv.FormatFloat(f, 'e', -1, 64) // written as the float
		}
	}
	return nil
}

// pairedSurrogates reports whether every \u escape of a UTF-16
// surrogate in the JSON text s is a high one followed by a low one:
// orjson refuses a lone one ("no low surrogate in string"), which
// Python's json accepts.
func pairedSurrogates(s string) bool {
	hexAt := func(i int) (int, bool) {
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
		return int(n), err == nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		u, ok := hexAt(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case 0xD800 <= u && u < 0xDC00:
			lo, ok := hexAt(i + 6)
			if !ok || lo < 0xDC00 || lo >= 0xE000 {
				return false
			}
			i += 11
		case 0xDC00 <= u && u < 0xE000:
			return false
		default:
			i += 5
		}
	}
	return true
}

// asciiEscape is json.dumps' ensure_ascii on a JSON text: every
// non-ASCII character as \uXXXX (a surrogate pair above U+FFFF).
func asciiEscape(s string) string {
	var b strings.Builder
	const hex = "0123456789abcdef"
	u := func(r rune) {
		b.WriteString(`\u`)
		for sh := 12; sh >= 0; sh -= 4 {
			b.WriteByte(hex[(r>>sh)&15])
		}
	}
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			u(0xD800 + (r >> 10))
			u(0xDC00 + (r & 0x3FF))
		default:
			u(r)
		}
	}
	return b.String()
}
