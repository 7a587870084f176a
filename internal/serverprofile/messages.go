package serverprofile

import (
	"bytes"
	"strings"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// prepareMessage builds one message as the template sees it; multimodal
// says that the model takes media (vLLM: imgs collects its images).
func prepareMessage(rules Rules, m *extract.Message, format string, imgs *imageRefs, multimodal bool) (chat.Object, error) {
	role := m.Role
	if rules[AxisKeys] == SGLang {
		r, err := sglangRole(role)
		if err != nil {
			return nil, err
		}
		role = r
	}
	content, err := shapeContent(rules, m, role, format, imgs, multimodal)
	if err != nil {
		return nil, err
	}
	msg, err := keepKeys(rules[AxisKeys], m, role, content)
	if err != nil {
		return nil, err
	}
	msg = reasoning(rules[AxisReasoning], rules[AxisKeys], m, role, msg)
	return toolArgs(rules[AxisToolArgs], role, msg)
}

// sglangRole: SGLang validates a message as ChatCompletionMessageUserParam
// (role "user") or ChatCompletionMessageGenericParam, whose role is
// lower-cased and must be one of its roles (protocol.py @004c82e0,
// _normalize_role).
func sglangRole(role string) (string, error) {
	if role == "user" {
		return role, nil
	}
	switch r := strings.ToLower(role); r {
	case "system", "assistant", "tool", "function", "developer", "latest_reminder":
		return r, nil
	}
	return "", refuse(SGLang, "unknown message role", "%q", role)
}

// shapeContent is the content value the template sees.
func shapeContent(rules Rules, m *extract.Message, role, format string, imgs *imageRefs, multimodal bool) (any, error) {
	raw, present := m.Fields.Get("content")
	if !present || isNull(raw) {
		switch rules[AxisNull] {
		case VLLM:
			// §1.2: "if content is None: content = []", then joined to ""
			// (string format) or kept as [] (openai format)
			// (chat_utils.py @001eadcf _parse_chat_message_content).
			if format == chat.ContentOpenAI {
				if role == "tool" {
					return "", nil // tool-role lists become "\n".join → ""
				}
				return []chat.Object{}, nil
			}
			return "", nil
		case Transformers:
			// §6 table: transformers passes None through.
			return nil, nil
		default:
			// SGLang: msg_dict["content"] = "" (serving_chat.py @002897c2);
			// AIPerf's chat view joins no parts: "".
			return "", nil
		}
	}
	if m.StringContent {
		s := m.Parts[0]
		if rules[AxisParts] == VLLM && format == chat.ContentOpenAI && role != "tool" {
			// §1.2: a string content is made a one-part list and, in
			// "openai" format, stays one ({"type": "text", "text": s}).
			// A tool message's text list is joined back (§1.2 tool role).
			return []chat.Object{{{Key: "type", Value: "text"}, {Key: "text", Value: s}}}, nil
		}
		return s, nil
	}
	// A list of parts (payload has rejected other shapes).
	switch rules[AxisParts] {
	case VLLM:
		return vllmParts(raw, role, format, imgs, m.Index)
	case SGLang:
		return sglangParts(raw, role, format, multimodal)
	default:
		// transformers (the wire reference's rule, chat.FlattenContent) and
		// AIPerf (extract_payload_inputs): text parts joined with "".
		return strings.Join(m.Parts, ""), nil
	}
}

// vllmMedia are the part types vLLM hands its multimodal parser
// (chat_utils.py @001eadcf MM_PARSER_MAP); a text-only model has none.
var vllmMedia = map[string]bool{
	"image_url": true, "input_image": true, "image_embeds": true, "audio_embeds": true,
	"prompt_embeds": true, "image_pil": true, "audio_url": true, "input_audio": true, "video_url": true,
}

// vllmParts is _parse_chat_message_content_parts (§1.2, chat_utils.py
// @001eadcf): for a text-only model (imgs nil) media parts are refused;
// for a vision-language model image parts become {"type": "image"}
// ("openai" format) or the model's placeholder in front of the text
// ("string" format), and are collected in order for expansion.
func vllmParts(raw json.RawMessage, role, format string, imgs *imageRefs, msg int) (any, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, err
	}
	openai := format == chat.ContentOpenAI
	var texts []string // openai: the text parts' texts
	// string format: the texts to join, as JSON strings (joinTexts decodes
	// them once, into the content itself)
	var rawTexts [][]byte
	var items []chat.Object
	images := 0 // image parts of this message
	image := func(part jsonobj.Object, j int) error {
		if err := imgs.add(part, msg, j); err != nil {
			return err
		}
		images++
		if openai {
			items = append(items, chat.Object{{Key: "type", Value: "image"}})
		}
		return nil
	}
	// add takes a text part's value, a JSON string.
	add := func(raw []byte) {
		if openai {
			s, _ := str(raw)
			items = append(items, chat.Object{{Key: "type", Value: "text"}, {Key: "text", Value: s}})
			texts = append(texts, s)
		} else if string(bytes.TrimSpace(raw)) != `""` {
			// "if parse_res: content.append(parse_res)": an empty text
			// part is dropped before the "\n" join.
			rawTexts = append(rawTexts, raw)
		}
	}
	for j, e := range elems {
		if isString(e) {
			add(e) // a bare string part is text
			continue
		}
		part, err := jsonobj.Members(e)
		if err != nil {
			return nil, refuse(VLLM, "a content part must be an object or a string", "content[%d]", j)
		}
		typ, hasType := part.Get("type")
		if !hasType || isNull(typ) {
			if imgs != nil && part.Has("image_url") {
				// _parse_chat_message_content_mm_part takes a part
				// without a type by its key.
				if err := image(part, j); err != nil {
					return nil, err
				}
				continue
			}
			for _, k := range []string{"image_url", "image_pil", "image_embeds", "audio_embeds", "prompt_embeds", "audio_url", "input_audio", "video_url"} {
				if part.Has(k) {
					return nil, refuse(VLLM, "media part for a text-only model", "content[%d] has %q", j, k)
				}
			}
			if name, ok := part.Get("tool_reference"); ok {
				if isString(name) {
					add(name)
				} else {
					add([]byte(`""`)) // not a string: None
				}
				continue
			}
			return nil, refuse(VLLM, "content part without a type", "content[%d]: Missing 'type' field in multimodal part", j)
		}
		t, ok := str(typ)
		if !ok {
			return nil, refuse(VLLM, "content part without a type", "content[%d]: Invalid 'type' field in multimodal part", j)
		}
		field := ""
		switch t {
		case "text", "input_text", "output_text":
			field = "text"
		case "refusal":
			field = "refusal"
		case "thinking":
			field = "thinking"
		case "tool_reference":
			name, _ := part.Get("name")
			if openai {
				s, _ := str(name)
				items = append(items, chat.Object{{Key: "type", Value: "tool_reference"}, {Key: "name", Value: s}})
			} else if isString(name) {
				add(name)
			}
			continue
		case "image_url", "input_image":
			if imgs == nil {
				return nil, refuse(VLLM, "media part for a text-only model", "content[%d] is %q", j, t)
			}
			if err := image(part, j); err != nil {
				return nil, err
			}
			continue
		default:
			if vllmMedia[t] {
				return nil, refuse(VLLM, "media part for a text-only model", "content[%d] is %q", j, t)
			}
			return nil, refuse(VLLM, "unsupported content part type", "content[%d]: Unsupported chat content part type: %q", j, t)
		}
		v, ok := part.Get(field)
		if !ok || isNull(v) {
			// A text or refusal part without a value is skipped with a
			// warning; other types give None, which the string join skips.
			continue
		}
		if !isString(v) {
			return nil, refuse(VLLM, "a text part's value must be a string", "content[%d].%s", j, field)
		}
		add(v)
	}
	if !openai {
		placeholder := ""
		if images > 0 {
			placeholder = vllmImagePlaceholder(imgs.vis.Processor.Family())
		}
		return joinTexts(rawTexts, images, placeholder)
	}
	if role == "tool" {
		// §1.2 tool role: a list of text parts only is joined with "\n".
		for _, it := range items {
			if it[0].Value != "text" {
				return items, nil
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	if items == nil {
		items = []chat.Object{}
	}
	return items, nil
}

// joinTexts is the string format's content: the texts (JSON strings)
// joined with "\n" and, for a message with images, _get_full_multimodal_text_prompt
// without interleave_mm_strings: placeholders the text already holds
// stand for images; the others go in front, each followed by "\n". The
// texts are decoded straight into the content, with room in front for
// the placeholders: one allocation, where decoding each text and then
// copying it behind the placeholders took three of a long text's size.
func joinTexts(raw [][]byte, images int, placeholder string) (string, error) {
	room := images * (len(placeholder) + 1)
	size := room
	for _, r := range raw {
		size += len(r) + 1
	}
	buf := make([]byte, room, size)
	for i, r := range raw {
		if i > 0 {
			buf = append(buf, '\n')
		}
		var err error
		if buf, err = jsonobj.AppendString(buf, r); err != nil {
			return "", err
		}
	}
	start := room
	if images > 0 && placeholder != "" {
		// (A model class without a placeholder, Mistral3: the text as it
		// is; the images find the processor's token there or the request
		// fails.) A placeholder holds no "\n", so none spans a join.
		missing := images - bytes.Count(buf[room:], []byte(placeholder))
		if missing < 0 {
			return "", refuse(VLLM, "image placeholders", "Found more '%s' placeholders in input prompt than actual multimodal data items.", placeholder)
		}
		for range missing {
			start -= len(placeholder) + 1
			copy(buf[start:], placeholder)
			buf[start+len(placeholder)] = '\n'
		}
	}
	content := buf[start:]
	return unsafe.String(unsafe.SliceData(content), len(content)), nil
}

// sglangParts is process_content_for_template_format and
// normalize_tool_content (§5; jinja_template_utils.py @1dc194d5,
// serving_chat.py @002897c2). Part types outside SGLang's pydantic union
// are a 400, and so is a media part for a text-only model
// (_validate_media_content, serving_chat.py in SGLang 0.5.23).
func sglangParts(raw json.RawMessage, role, format string, multimodal bool) (any, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, err
	}
	var texts []string
	var items []any
	allText := true
	for j, e := range elems {
		part, err := jsonobj.Members(e)
		if err != nil {
			return nil, refuse(SGLang, "a content part must be an object", "content[%d]", j)
		}
		typ, _ := part.Get("type")
		t, _ := str(typ)
		switch t {
		case "text":
			v, _ := part.Get("text")
			s, ok := str(v)
			if !ok {
				return nil, refuse(SGLang, "a text part's value must be a string", "content[%d].text", j)
			}
			texts = append(texts, s)
			items = append(items, json.RawMessage(e))
		case "thinking", "tool_reference":
			allText = false
			items = append(items, json.RawMessage(e))
		case "image_url", "video_url", "audio_url":
			if !multimodal {
				return nil, refuse(SGLang, "media part for a text-only model", "content[%d]: Model only supports text input; received unsupported content type '%s'.", j, t)
			}
			allText = false
			items = append(items, chat.Object{{Key: "type", Value: strings.TrimSuffix(t, "_url")}})
		default:
			return nil, refuse(SGLang, "unsupported content part type", "content[%d]: %q", j, t)
		}
	}
	if format != chat.ContentOpenAI {
		// String format: text parts joined with a space; media dropped.
		return strings.Join(texts, " "), nil
	}
	if role == "tool" && allText {
		return strings.Join(texts, " "), nil
	}
	if items == nil {
		items = []any{}
	}
	return items, nil
}

// keepKeys builds the message with the keys the server keeps (§1.4 for
// vLLM, §5 for SGLang); reasoning keys are left to reasoning().
func keepKeys(p Profile, m *extract.Message, role string, content any) (chat.Object, error) {
	get := func(k string) (json.RawMessage, bool) { return m.Fields.Get(k) }
	msg := make(chat.Object, 0, 4)
	switch p {
	case VLLM:
		// _parse_chat_message_content (chat_utils.py @001eadcf): rebuilt
		// from scratch; unknown keys are dropped.
		msg = append(msg, chat.Field{Key: "role", Value: role}, chat.Field{Key: "content", Value: content})
		if role == "assistant" {
			if tc, ok := get("tool_calls"); ok && !isNull(tc) {
				msg = append(msg, chat.Field{Key: "tool_calls", Value: tc})
			}
		} else if role == "tool" {
			if id, ok := get("tool_call_id"); ok {
				msg = append(msg, chat.Field{Key: "tool_call_id", Value: id})
			}
		}
		for _, k := range []string{"name", "task"} {
			if v, ok := get(k); ok && isString(v) {
				msg = append(msg, chat.Field{Key: k, Value: v})
			}
		}
		if role == "developer" {
			v, _ := get("tools")
			msg = append(msg, chat.Field{Key: "tools", Value: v})
		}
	case SGLang:
		// msg.model_dump() then None values dropped
		// (jinja_template_utils.py @1dc194d5); a user message has only
		// role and content (protocol.py @004c82e0).
		msg = append(msg, chat.Field{Key: "role", Value: role}, chat.Field{Key: "content", Value: content})
		if role != "user" {
			for _, k := range []string{"tool_call_id", "name", "tool_calls", "tools"} {
				if v, ok := get(k); ok && !isNull(v) {
					msg = append(msg, chat.Field{Key: k, Value: v})
				}
			}
		}
	case Transformers:
		// The message as given; content replaced in place (added last when
		// absent, as dict(m, content=m.get("content")) does).
		seen := false
		for _, f := range m.Fields {
			if f.Key == "content" {
				msg = append(msg, chat.Field{Key: "content", Value: content})
				seen = true
				continue
			}
			msg = append(msg, chat.Field{Key: f.Key, Value: f.Value})
		}
		if !seen {
			msg = append(msg, chat.Field{Key: "content", Value: content})
		}
	default: // AIPerf's chat view: role, content, tool_calls.
		msg = append(msg, chat.Field{Key: "role", Value: role}, chat.Field{Key: "content", Value: content})
		if m.ToolCalls != nil {
			msg = append(msg, chat.Field{Key: "tool_calls", Value: m.ToolCalls})
		}
	}
	return msg, nil
}

// reasoning applies the reasoning rule of p (keys: the key rule, which
// decides whether the message's own reasoning keys are still there).
func reasoning(p, keys Profile, m *extract.Message, role string, msg chat.Object) chat.Object {
	if p == Transformers && keys == Transformers {
		return msg // as given, in place
	}
	msg = without(msg, "reasoning", "reasoning_content")
	r, hasR := m.Fields.Get("reasoning")
	rc, hasRC := m.Fields.Get("reasoning_content")
	hasR = hasR && !isNull(r)
	hasRC = hasRC && !isNull(rc)
	switch p {
	case VLLM:
		// §1.1 step 2: reasoning_content is renamed to reasoning when
		// reasoning is unset (chat_completion/protocol.py @002032ee); §1.4:
		// an assistant message then carries both reasoning and
		// reasoning_content (chat_utils.py @001eadcf).
		if role != "assistant" {
			return msg
		}
		if !hasR && hasRC {
			r, hasR = rc, true
		}
		if hasR {
			msg = insertAfter(msg, "tool_calls", chat.Field{Key: "reasoning", Value: r}, chat.Field{Key: "reasoning_content", Value: r})
		}
	case SGLang:
		// §5: reasoning_content is a model field, reasoning is not; None is
		// dropped; a user message has neither.
		if hasRC && role != "user" {
			msg = insertBefore(msg, "tool_calls", chat.Field{Key: "reasoning_content", Value: rc})
		}
	case Transformers:
		if hasR {
			msg = append(msg, chat.Field{Key: "reasoning", Value: r})
		}
		if hasRC {
			msg = append(msg, chat.Field{Key: "reasoning_content", Value: rc})
		}
	}
	// AIPerf: its chat view has no reasoning.
	return msg
}

// toolArgs applies the tool-call argument rule of p (§1.5, §5).
func toolArgs(p Profile, role string, msg chat.Object) (chat.Object, error) {
	i := index(msg, "tool_calls")
	if i < 0 || role != "assistant" {
		return msg, nil
	}
	raw, ok := msg[i].Value.(json.RawMessage)
	if !ok {
		return msg, nil
	}
	switch p {
	case VLLM:
		return vllmToolCalls(msg, i, raw)
	case SGLang:
		return sglangToolCalls(msg, i, raw)
	}
	return msg, nil
}

// vllmToolCalls is _postprocess_messages (chat_utils.py @001eadcf): an
// empty list is removed; a string argument is json.loads-ed (any JSON
// value is kept; invalid JSON gives {}). The reference document says "a
// non-dict or non-list value gives {}"; the source applies that only to
// non-string arguments, so '"5"' parses to 5. Those never reach it from
// the wire: the request's messages are validated first against OpenAI's
// message types, whose function.arguments is Required[str] (openai
// chat_completion_message_function_tool_call_param.py; vLLM's own
// CustomChatCompletionMessageParam uses the same tool-call type), so a
// real vLLM 0.32 answers 400 to an object, a list, null, a number or no
// arguments at all (testdata/vllm/expectations.jsonl.gz, tool_args_dict).
func vllmToolCalls(msg chat.Object, i int, raw json.RawMessage) (chat.Object, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return msg, nil // "if not isinstance(tool_calls, list): continue"
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return append(msg[:i:i], msg[i+1:]...), nil
	}
	calls := make([]chat.Object, len(elems))
	for j, e := range elems {
		call, err := jsonobj.Members(e)
		if err != nil {
			return nil, refuse(VLLM, "a tool call must be an object", "tool_calls[%d]", j)
		}
		fn, _ := call.Get("function")
		fnObj, err := jsonobj.Members(fn)
		if err != nil || fn == nil {
			return nil, refuse(VLLM, "a tool call needs a function object", "tool_calls[%d].function", j)
		}
		args, _ := fnObj.Get("arguments")
		t := bytes.TrimSpace(args)
		if !isString(t) {
			return nil, refuse(VLLM, "tool-call arguments must be a string", "tool_calls[%d].function.arguments: Input should be a valid string", j)
		}
		var parsed any = chat.Object{}
		s, _ := str(t)
		if v := bytes.TrimSpace([]byte(s)); len(v) > 0 && json.Valid(v) {
			parsed = json.RawMessage(v)
		}
		calls[j] = withValue(objectOf(call), "function", withValue(objectOf(fnObj), "arguments", parsed))
	}
	out := append(chat.Object{}, msg...)
	out[i] = chat.Field{Key: "tool_calls", Value: calls}
	return out, nil
}

// sglangToolCalls: parse_tool_call_arguments (serving_chat.py @002897c2)
// loads a string argument with orjson and refuses invalid JSON or a
// non-object; the call is then model_dump-ed as ToolCall (id, index,
// type, function{name, arguments}; protocol.py @004c82e0).
func sglangToolCalls(msg chat.Object, i int, raw json.RawMessage) (chat.Object, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, refuse(SGLang, "tool_calls must be a list", "")
	}
	calls := make([]chat.Object, len(elems))
	for j, e := range elems {
		call, err := jsonobj.Members(e)
		if err != nil {
			return nil, refuse(SGLang, "a tool call must be an object", "tool_calls[%d]", j)
		}
		fn, _ := call.Get("function")
		fnObj, err := jsonobj.Members(fn)
		if err != nil || fn == nil {
			return nil, refuse(SGLang, "a tool call needs a function object", "tool_calls[%d].function", j)
		}
		args, _ := fnObj.Get("arguments")
		var argv any = nil
		if t := bytes.TrimSpace(args); isString(t) {
			s, _ := str(t)
			v := bytes.TrimSpace([]byte(s))
			if !json.Valid(v) {
				return nil, refuse(SGLang, "tool-call arguments must be valid JSON", "tool_calls[%d]: Assistant tool call function.arguments must be valid JSON.", j)
			}
			if v[0] != '{' {
				return nil, refuse(SGLang, "tool-call arguments must be a JSON object", "tool_calls[%d]: Assistant tool call function.arguments must be a JSON object.", j)
			}
			argv = json.RawMessage(v)
		} else if len(t) > 0 && !isNull(t) {
			argv = json.RawMessage(t)
		}
		field := func(o jsonobj.Object, k string, def any) any {
			if v, ok := o.Get(k); ok && !isNull(v) {
				return v
			}
			return def
		}
		calls[j] = chat.Object{
			{Key: "id", Value: field(call, "id", nil)},
			{Key: "index", Value: field(call, "index", nil)},
			{Key: "type", Value: field(call, "type", "function")},
			{Key: "function", Value: chat.Object{{Key: "name", Value: field(fnObj, "name", nil)}, {Key: "arguments", Value: argv}}},
		}
	}
	out := append(chat.Object{}, msg...)
	out[i] = chat.Field{Key: "tool_calls", Value: calls}
	return out, nil
}

func objectOf(o jsonobj.Object) chat.Object {
	out := make(chat.Object, len(o))
	for i, m := range o {
		out[i] = chat.Field{Key: m.Key, Value: m.Value}
	}
	return out
}

// withValue sets key in o (in place if present, else last).
func withValue(o chat.Object, key string, v any) chat.Object {
	if i := index(o, key); i >= 0 {
		o[i].Value = v
		return o
	}
	return append(o, chat.Field{Key: key, Value: v})
}

func index(o chat.Object, key string) int {
	for i, f := range o {
		if f.Key == key {
			return i
		}
	}
	return -1
}

func without(o chat.Object, keys ...string) chat.Object {
	out := o[:0:0]
	for _, f := range o {
		drop := false
		for _, k := range keys {
			drop = drop || f.Key == k
		}
		if !drop {
			out = append(out, f)
		}
	}
	if len(out) == len(o) {
		return o
	}
	return out
}

// insertAfter puts fields after key, or last when key is absent.
func insertAfter(o chat.Object, key string, fields ...chat.Field) chat.Object {
	i := index(o, key)
	if i < 0 {
		i = index(o, "content")
	}
	out := append(chat.Object{}, o[:i+1]...)
	out = append(out, fields...)
	return append(out, o[i+1:]...)
}

// insertBefore puts fields before key, or last when key is absent.
func insertBefore(o chat.Object, key string, fields ...chat.Field) chat.Object {
	i := index(o, key)
	if i < 0 {
		return append(o, fields...)
	}
	out := append(chat.Object{}, o[:i]...)
	out = append(out, fields...)
	return append(out, o[i:]...)
}
