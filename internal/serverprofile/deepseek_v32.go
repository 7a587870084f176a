package serverprofile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// DeepSeek-V3.2 is how vLLM prefills a deepseek_v32 chat request: not
// through a Jinja template (the model ships none) but through DeepSeek's
// own encoder, encoding/encoding_dsv32.py, which vLLM copies as
// vllm/tokenizers/deepseek_v32_encoding.py (vLLM main, commit 026ddf88;
// the same text at c3a66b95) and calls from deepseek_v32.py's
// apply_chat_template (commit 10f319bf): thinking mode when the
// chat_template_kwargs "thinking" or "enable_thinking" is truthy, the
// request's tools in a system message put first, earlier reasoning
// dropped when the last message is the user's. The text is encoded whole
// with add_special_tokens=False.
//
// The messages are vLLM's conversation of the request (chat_utils.py,
// "string" content format): a content of text parts is their texts
// joined with "\n", a null content is "". Tool-call arguments are
// rendered from the request's JSON string, as the encoder's json.loads
// reads them (SGLang passes the string; vLLM builds whose
// _postprocess_messages has made them a dict first make the encoder
// raise a TypeError on any earlier tool call — not reproduced).
//
// The special tokens it spells (<｜begin▁of▁sentence｜>, <｜User｜>,
// <｜Assistant｜>, <｜end▁of▁sentence｜>, <think>, </think>) must be
// added tokens of the model's tokenizer.json, as they are in
// DeepSeek-V3.2's; DeepSeek-V3's has no <think> and </think> (ids
// 128798/128799 are place holders there), so its vocabulary counts them
// as text. "｜DSML｜" is plain text in both.
const (
	dsBOS        = "<｜begin▁of▁sentence｜>"
	dsEOS        = "<｜end▁of▁sentence｜>"
	dsUser       = "<｜User｜>"
	dsAssistant  = "<｜Assistant｜>"
	dsThinkStart = "<think>"
	dsThinkEnd   = "</think>"
	dsDSML       = "｜DSML｜"
)

// dsToolsSystem is TOOLS_SYSTEM_TEMPLATE with its fields filled but the
// tool schemas, which go between the two halves.
var dsToolsSystemHead = strings.NewReplacer("{dsml_token}", dsDSML, "{thinking_start_token}", dsThinkStart, "{thinking_end_token}", dsThinkEnd).Replace(`## Tools
You have access to a set of tools you can use to answer the user's question.
You can invoke functions by writing a "<{dsml_token}function_calls>" block like the following as part of your reply to the user:
<{dsml_token}function_calls>
<{dsml_token}invoke name="$FUNCTION_NAME">
<{dsml_token}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{dsml_token}parameter>
...
</{dsml_token}invoke>
<{dsml_token}invoke name="$FUNCTION_NAME2">
...
</{dsml_token}invoke>
</{dsml_token}function_calls>
String and scalar parameters should be specified as is without any escaping or quotes, while lists and objects should use JSON format. The "string" attribute should be set to "true" for string type parameters and "false" for other types (numbers, booleans, arrays, objects).
If the thinking_mode is enabled, then after function results you should strongly consider outputting a thinking block. Here is an example:
<{dsml_token}function_calls>
...
</{dsml_token}function_calls>
<function_results>
...
</function_results>
{thinking_start_token}...thinking about results{thinking_end_token}
Here are the functions available in JSONSchema format:
<functions>
`)

const dsToolsSystemTail = "\n</functions>\n"

// dsVariant is what a server does around the encoder: vLLM calls its
// copy of encoding_dsv32.py (above); SGLang 0.5.23 runs its own variant,
// sglang/srt/entrypoints/openai/encoding_dsv32.py, from
// serving_chat.py's _apply_jinja_template (the chat_encoding_spec
// "dsv32" branch), with its own message handling
// (docs/reference/server-preprocessing.md §7.1).
type dsVariant struct {
	server Profile
	// partSep joins a content's text parts: vLLM's "string" content
	// format "\n", SGLang's process_content_for_template_format " ".
	partSep string
	// reasoningKeys are read in order, the first non-empty kept: vLLM's
	// encoder reads "reasoning" or "reasoning_content"; SGLang's reads
	// reasoning_content only (its message model has no "reasoning").
	reasoningKeys []string
	// thinkingKeys are the chat_template_kwargs that turn thinking on:
	// vLLM's "thinking" or "enable_thinking"; SGLang's
	// _thinking_requested reads "thinking" (SGLANG_DEFAULT_THINKING unset).
	thinkingKeys []string
	// sglang: SGLang's handling — encode_messages with its default
	// drop_thinking=True; a final assistant message made a user message
	// (_handle_last_assistant_message); the tools put on a leading
	// system message of the request, else on an empty one inserted; the
	// tools as its Function.model_dump writes them; a user message's
	// content required (ChatCompletionMessageUserParam); other roles
	// lower-cased; and the text encoded with the tokenizer's special
	// tokens (tokenizer.encode(real_input)): DeepSeek-V3.2's
	// LlamaTokenizerFast with add_bos_token true puts its BOS before the
	// encoder's own, so the prompt starts with two. islkit's tokenizer
	// reads tokenizer.json only (whose ByteLevel post-processor adds
	// nothing), so the second BOS is written as text; a folder whose
	// tokenizer_config.json sets add_bos_token false would be counted
	// one token high (docs/reference/server-preprocessing.md §7.1).
	sglang bool
}

var (
	dsVLLM   = dsVariant{server: VLLM, partSep: "\n", reasoningKeys: []string{"reasoning", "reasoning_content"}, thinkingKeys: []string{"thinking", "enable_thinking"}}
	dsSGLang = dsVariant{server: SGLang, partSep: " ", reasoningKeys: []string{"reasoning_content"}, thinkingKeys: []string{"thinking"}, sglang: true}
)

// dsVariantOf is the variant the rules r run; a mix of servers that each
// run an encoder of their own is not reproduced.
func dsVariantOf(r Rules) (dsVariant, error) {
	v := dsVLLM
	if r[0] == SGLang {
		v = dsSGLang
	}
	for _, p := range r[1:] {
		if p != r[0] && (p == SGLang || r[0] == SGLang) {
			return dsVariant{}, refuse(r[0], "deepseek_v32", "a mix of vLLM's and SGLang's DeepSeek-V3.2 encoders is not reproduced")
		}
	}
	return v, nil
}

// dsMessage is one message of the server's conversation as the encoder
// reads it.
type dsMessage struct {
	role      string
	content   string
	reasoning string
	toolCalls []dsToolCall
	tools     string // the rendered tools of the system message
	inserted  bool   // the system message the server put first
}

type dsToolCall struct {
	name      string
	arguments string // the DSML parameters
}

// renderDeepSeekV32 is Render for a chat body under DeepSeek-V3.2's
// encoder as the server of v runs it; noTools leaves the tools out and
// counts their texts bare on top (measure --no-tools).
func renderDeepSeekV32(v dsVariant, ex *extract.Inputs, noTools bool, dst []byte) (Prompt, error) {
	const rule = "deepseek_v32"
	msgsRaw, ok := ex.Body.Get("messages")
	if !ok {
		return Prompt{}, refuse(v.server, rule, `only chat bodies with "messages" are rendered by DeepSeek-V3.2's encoder (no Responses path for it)`)
	}
	elems, err := jsonobj.Elements(msgsRaw)
	if err != nil {
		return Prompt{}, fmt.Errorf(`deepseek_v32: "messages": %w`, err)
	}

	thinking, err := dsThinking(ex.Body, v.thinkingKeys, v.sglang)
	if err != nil {
		return Prompt{}, err
	}

	var msgs []dsMessage
	for i, e := range elems {
		m, err := dsReadMessage(v, e, i)
		if err != nil {
			return Prompt{}, err
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return Prompt{}, refuse(v.server, rule, `"messages" is empty`)
	}
	if v.sglang && msgs[len(msgs)-1].role == "assistant" {
		if raw, ok := ex.Body.Get("continue_final_message"); ok && pyTruthy(raw) {
			return Prompt{}, refuse(SGLang, rule, "continue_final_message: the final assistant message's ids appended after the prompt's are not reproduced")
		}
		// _handle_last_assistant_message: {"role": "user", "content": ...}.
		last := &msgs[len(msgs)-1]
		*last = dsMessage{role: "user", content: last.content}
	}

	var bare []string
	tools, err := dsRequestTools(v, ex.Body)
	if err != nil {
		return Prompt{}, err
	}
	if len(tools) > 0 {
		if noTools {
			bare = ex.ToolTexts
		} else {
			text, err := dsRenderTools(v, tools)
			if err != nil {
				return Prompt{}, err
			}
			if v.sglang && msgs[0].role == "system" {
				// serving_chat.py: messages[0]["tools"] = ... on the
				// request's own leading system message.
				msgs[0].tools = text
			} else {
				// vLLM's deepseek_v32.py and SGLang alike:
				// messages.insert(0, {"role": "system", ...}) with the tools.
				msgs = append([]dsMessage{{role: "system", tools: text, inserted: true}}, msgs...)
			}
		}
	}

	lastUser := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if r := msgs[i].role; r == "user" || r == "developer" {
			lastUser = i
			break
		}
	}
	// drop_thinking_messages, when the last message is the user's: earlier
	// assistants lose their reasoning; a developer message before the last
	// user one is dropped, which leaves the encoder indexing past the end
	// of the shortened list (it raises).
	if thinking && (v.sglang || msgs[len(msgs)-1].role == "user") {
		for i := range msgs[:max(lastUser, 0)] {
			switch msgs[i].role {
			case "assistant":
				msgs[i].reasoning = ""
			case "developer":
				return Prompt{}, refuse(v.server, rule, "messages[%d]: a developer message before the last user message in thinking mode makes the encoder raise (drop_thinking_messages drops it)", dsIndex(msgs, i))
			}
		}
	}

	if v.sglang {
		dst = append(dst, dsBOS...)
	}
	dst = append(dst, dsBOS...)
	for i := range msgs {
		if dst, err = dsAppendMessage(v, dst, msgs, i, lastUser, thinking); err != nil {
			return Prompt{}, err
		}
	}
	return Prompt{Text: dst, Bare: bare}, nil
}

// dsRequestTools are the request's tools the server hands the encoder:
// all of them under vLLM; under SGLang (_process_messages, then
// _apply_jinja_template's request.tools if tools) none when tool_choice
// is "none" or names a function no tool has, else all of them.
func dsRequestTools(v dsVariant, body jsonobj.Object) ([]tool, error) {
	raw, ok := body.Get("tools")
	if !ok || isNull(raw) {
		return nil, nil
	}
	tools, err := toolList(v.server, raw)
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, refuse(v.server, "tools must not be an empty array", "")
	}
	if v.sglang {
		if c, ok := body.Get("tool_choice"); ok && !isNull(c) {
			choice, named := toolChoice(c)
			if named && !slices.ContainsFunc(tools, func(t tool) bool { return t.fn.nameString == choice }) {
				return nil, nil
			}
			if !named && choice == "none" {
				return nil, nil
			}
		}
	}
	return tools, nil
}

// dsIndex is the request's index of msgs[i] (the tools' system message
// is not the request's).
func dsIndex(msgs []dsMessage, i int) int {
	if len(msgs) > 0 && msgs[0].inserted {
		return i - 1
	}
	return i
}

// dsThinking: deepseek_v32.py's thinking = kwargs.get("thinking", False)
// or kwargs.get("enable_thinking", False) (SGLang's: kwargs.get("thinking",
// False)), with Python's truthiness. Under SGLang a reasoning effort sets
// the default of "thinking" (sglangReasoning).
func dsThinking(body jsonobj.Object, keys []string, sglang bool) (bool, error) {
	var kw jsonobj.Object
	if raw, ok := body.Get("chat_template_kwargs"); ok && !isNull(raw) {
		var err error
		if kw, err = jsonobj.Members(raw); err != nil {
			return false, fmt.Errorf(`deepseek_v32: "chat_template_kwargs" is not an object`)
		}
	}
	for _, k := range keys {
		if v, ok := kw.Get(k); ok && pyTruthy(v) {
			return true, nil
		}
	}
	if _, set := kw.Get("thinking"); sglang && !set {
		_, thinking, err := sglangReasoning(body)
		if err != nil || thinking != nil {
			return thinking != nil && *thinking, err
		}
	}
	return false, nil
}

// pyTruthy is bool(json.loads(raw)).
func pyTruthy(raw []byte) bool {
	switch t := string(bytes.TrimSpace(raw)); t {
	case "null", "false", `""`, "":
		return false
	default:
		if t[0] == '[' || t[0] == '{' {
			return len(bytes.Trim([]byte(t[1:len(t)-1]), " \t\r\n")) > 0
		}
		if t[0] == '-' || (t[0] >= '0' && t[0] <= '9') {
			var f float64
			if json.Unmarshal([]byte(t), &f) == nil {
				return f != 0
			}
		}
		return true
	}
}

// dsReadMessage is one request message as the server's conversation
// holds it.
func dsReadMessage(v dsVariant, raw json.RawMessage, i int) (dsMessage, error) {
	o, err := harmonyObject(raw)
	if err != nil {
		return dsMessage{}, fmt.Errorf("deepseek_v32: messages[%d] is not an object", i)
	}
	m := dsMessage{role: strField(o, "role")}
	if lower := strings.ToLower(m.role); v.sglang && lower != "user" {
		// ChatCompletionMessageGenericParam lower-cases its roles;
		// ChatCompletionMessageUserParam takes "user" only.
		m.role = lower
	}
	switch m.role {
	case "system", "user", "developer", "assistant", "tool":
	default:
		return dsMessage{}, refuse(v.server, "deepseek_v32", "messages[%d].role %q: the encoder knows system, user, developer, assistant and tool", i, m.role)
	}
	if v.sglang && m.role == "user" {
		if c, ok := o.Get("content"); !ok || isNull(c) {
			return dsMessage{}, refuse(SGLang, "deepseek_v32", "messages[%d].content: a user message needs a content (ChatCompletionMessageUserParam)", i)
		}
	}
	if m.content, err = dsContent(v, o); err != nil {
		return dsMessage{}, fmt.Errorf("deepseek_v32: messages[%d].content: %w", i, err)
	}
	if m.role == "developer" || (v.sglang && m.role == "system") {
		if t, ok := o.Get("tools"); ok && !isNull(t) {
			return dsMessage{}, refuse(v.server, "deepseek_v32", "messages[%d].tools: a %s message's own tools are not reproduced", i, m.role)
		}
	}
	if m.role == "developer" {
		if m.content == "" {
			return dsMessage{}, refuse(v.server, "deepseek_v32", "messages[%d]: the encoder asserts a developer message has content", i)
		}
	}
	if m.role != "assistant" {
		return m, nil
	}
	for _, k := range v.reasoningKeys {
		if r, ok := o.Get(k); ok && !isNull(r) {
			s, err := jsonobj.String(r)
			if err != nil || !jsonobj.IsString(r) {
				return dsMessage{}, fmt.Errorf("deepseek_v32: messages[%d].%s is not a string", i, k)
			}
			if s != "" {
				m.reasoning = s
				break
			}
		}
	}
	calls, err := toolCalls(o)
	if err != nil {
		return dsMessage{}, fmt.Errorf("deepseek_v32: messages[%d].tool_calls: %w", i, err)
	}
	for j, c := range calls {
		tc, err := dsReadToolCall(c)
		if err != nil {
			return dsMessage{}, refuse(v.server, "deepseek_v32", "messages[%d].tool_calls[%d]: %v", i, j, err)
		}
		m.toolCalls = append(m.toolCalls, tc)
	}
	return m, nil
}

// dsContent is the content as one string: a string as it is, a list's
// text parts joined with v.partSep, "" for null or absent.
func dsContent(v dsVariant, o jsonobj.Object) (string, error) {
	raw, ok := o.Get("content")
	if !ok || isNull(raw) {
		return "", nil
	}
	if jsonobj.IsString(raw) {
		return jsonobj.String(raw)
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return "", fmt.Errorf("neither a string nor a list")
	}
	texts := make([]string, 0, len(elems))
	for k, e := range elems {
		p, err := harmonyObject(e)
		if err != nil {
			return "", fmt.Errorf("[%d] is not an object", k)
		}
		if typ := strField(p, "type"); typ != "text" {
			return "", refuse(v.server, "deepseek_v32", "[%d].type %q: only text parts reach DeepSeek-V3.2's encoder", k, typ)
		}
		t, ok := p.Get("text")
		if !ok || !jsonobj.IsString(t) {
			return "", fmt.Errorf("[%d].text is not a string", k)
		}
		s, _ := jsonobj.String(t)
		texts = append(texts, s)
	}
	return strings.Join(texts, v.partSep), nil
}

// dsReadToolCall renders one OpenAI tool call's arguments as
// encode_arguments_to_dsml does: json.loads of the arguments string, then
// each key's value as it is when a string, else to_json of it.
func dsReadToolCall(c jsonobj.Object) (dsToolCall, error) {
	fnRaw, ok := c.Get("function")
	fn, err := harmonyObject(fnRaw)
	if !ok || err != nil {
		return dsToolCall{}, fmt.Errorf("function is not an object")
	}
	nameRaw, ok := fn.Get("name")
	if !ok || !jsonobj.IsString(nameRaw) {
		return dsToolCall{}, fmt.Errorf("function.name is not a string")
	}
	name, _ := jsonobj.String(nameRaw)
	argRaw, ok := fn.Get("arguments")
	if !ok || !jsonobj.IsString(argRaw) {
		return dsToolCall{}, fmt.Errorf("function.arguments is not a JSON string (json.loads raises)")
	}
	argText, _ := jsonobj.String(argRaw)
	args, err := dsArguments([]byte(argText))
	if err != nil {
		return dsToolCall{}, fmt.Errorf("function.arguments: %w", err)
	}
	return dsToolCall{name: name, arguments: args}, nil
}

// dsArguments is encode_arguments_to_dsml of one arguments text.
func dsArguments(text []byte) (string, error) {
	if !json.Valid(text) {
		return "", fmt.Errorf("not valid JSON (json.loads raises)")
	}
	obj, err := harmonyObject(text)
	if err != nil {
		return "", fmt.Errorf("not a JSON object (the encoder calls .items() on it)")
	}
	// A Python dict: a repeated key keeps its first place, its last value.
	var keys []string
	last := map[string]json.RawMessage{}
	for _, mem := range obj {
		if _, seen := last[mem.Key]; !seen {
			keys = append(keys, mem.Key)
		}
		last[mem.Key] = mem.Value
	}
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		v := last[k]
		isStr := jsonobj.IsString(v)
		b.WriteString("<" + dsDSML + `parameter name="` + k + `" string="`)
		if isStr {
			s, _ := jsonobj.String(v)
			b.WriteString(`true">` + s)
		} else {
			d, err := chat.PyDumps(v)
			if err != nil {
				return "", fmt.Errorf("%q: %w", k, err)
			}
			b.WriteString(`false">` + d)
		}
		b.WriteString("</" + dsDSML + "parameter>")
	}
	return b.String(), nil
}

// dsRenderTools is render_tools of the tools' function dicts as vLLM's
// model_dump gives them: name, description and parameters (null when
// missing), then any other fields.
func dsRenderTools(v dsVariant, tools []tool) (string, error) {
	var b strings.Builder
	b.WriteString(dsToolsSystemHead)
	for i, t := range tools {
		if i > 0 {
			b.WriteByte('\n')
		}
		fields := []string{"name", "description", "parameters"}
		if v.sglang {
			var err error
			if fields, err = dsSGLangToolFields(t, i); err != nil {
				return "", err
			}
		} else {
			for _, m := range t.fn.obj {
				if m.Key != "name" && m.Key != "description" && m.Key != "parameters" {
					fields = append(fields, m.Key)
				}
			}
		}
		b.WriteByte('{')
		for j, k := range fields {
			if j > 0 {
				b.WriteString(", ")
			}
			kq, _ := chat.PyDumps(mustJSONString(k))
			b.WriteString(kq + ": ")
			val, ok := t.fn.obj.Get(k)
			if !ok {
				val = json.RawMessage("null")
			}
			d, err := chat.PyDumps(val)
			if err != nil {
				return "", refuse(v.server, "deepseek_v32", "tools[%d].function.%s: %v", i, k, err)
			}
			b.WriteString(d)
		}
		b.WriteByte('}')
	}
	b.WriteString(dsToolsSystemTail)
	return b.String(), nil
}

// dsSGLangToolFields are the keys of SGLang's Function.model_dump (0.5.23
// protocol.py): its fields in the request's order (key_order), then the
// missing ones of description, name and parameters (null), strict and
// defer_loading left out when null; other keys are not fields and are
// dropped.
func dsSGLangToolFields(t tool, i int) ([]string, error) {
	if d, ok := t.obj.Get("defer_loading"); ok && !isNull(d) {
		return nil, refuse(SGLang, "deepseek_v32", "tools[%d].defer_loading: a tool's defer_loading copied onto its function is not reproduced", i)
	}
	known := []string{"description", "name", "parameters", "strict", "defer_loading"}
	var fields []string
	seen := map[string]bool{}
	for _, m := range t.fn.obj {
		if !slices.Contains(known, m.Key) || seen[m.Key] {
			continue
		}
		seen[m.Key] = true
		val, _ := t.fn.obj.Get(m.Key)
		switch m.Key {
		case "description":
			if !isNull(val) && !jsonobj.IsString(val) {
				return nil, refuse(SGLang, "deepseek_v32", "tools[%d].function.description: not a string (SGLang's Function refuses it)", i)
			}
		case "strict", "defer_loading":
			if isNull(val) {
				continue
			}
			if t := string(bytes.TrimSpace(val)); t != "true" && t != "false" {
				return nil, refuse(SGLang, "deepseek_v32", "tools[%d].function.%s: not a boolean (pydantic's coercion is not reproduced)", i, m.Key)
			}
		}
		fields = append(fields, m.Key)
	}
	for _, k := range known[:3] {
		if !seen[k] {
			fields = append(fields, k)
		}
	}
	return fields, nil
}

func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// dsAppendMessage is render_message of msgs[i].
func dsAppendMessage(v dsVariant, dst []byte, msgs []dsMessage, i, lastUser int, thinking bool) ([]byte, error) {
	m := msgs[i]
	closeTurn := func(dst []byte, open bool) []byte {
		if open {
			return append(dst, dsThinkStart...)
		}
		return append(dst, dsThinkEnd...)
	}
	switch m.role {
	case "system":
		dst = append(dst, m.content...)
		if m.tools != "" {
			dst = append(dst, "\n\n"...)
			dst = append(dst, m.tools...)
		}
	case "developer":
		dst = append(dst, dsUser+"\n\n# The user's message is: "...)
		dst = append(dst, m.content...)
		dst = append(dst, dsAssistant...)
		dst = closeTurn(dst, i == lastUser && thinking)
	case "user":
		dst = append(dst, dsUser...)
		dst = append(dst, m.content...)
		dst = append(dst, dsAssistant...)
		dst = closeTurn(dst, i == lastUser && thinking)
	case "tool":
		prev := i - 1
		for prev >= 0 && msgs[prev].role == "tool" {
			prev--
		}
		if prev < 0 || msgs[prev].role != "assistant" {
			return nil, refuse(v.server, "deepseek_v32", "messages[%d]: a tool message must follow an assistant message with tool calls (the encoder asserts it)", dsIndex(msgs, i))
		}
		order := i - prev
		calls := len(msgs[prev].toolCalls)
		if calls < order {
			return nil, refuse(v.server, "deepseek_v32", "messages[%d]: more tool messages than the assistant's tool calls (the encoder asserts it)", dsIndex(msgs, i))
		}
		if order == 1 {
			dst = append(dst, "\n\n<function_results>"...)
		}
		dst = append(dst, "\n<result>"...)
		dst = append(dst, m.content...)
		dst = append(dst, "</result>"...)
		if order == calls {
			dst = append(dst, "\n</function_results>\n\n"...)
			dst = closeTurn(dst, i >= lastUser && thinking)
		}
	case "assistant":
		if thinking && i > lastUser {
			if m.reasoning == "" && len(m.toolCalls) == 0 {
				return nil, refuse(v.server, "deepseek_v32", "messages[%d]: in thinking mode an assistant message after the last user message needs reasoning or tool calls (the encoder asserts it)", dsIndex(msgs, i))
			}
			dst = append(dst, m.reasoning...)
			dst = append(dst, dsThinkEnd...)
		}
		dst = append(dst, m.content...)
		if len(m.toolCalls) > 0 {
			dst = append(dst, "\n\n<"+dsDSML+"function_calls>\n"...)
			for k, c := range m.toolCalls {
				if k > 0 {
					dst = append(dst, '\n')
				}
				dst = append(dst, "<"+dsDSML+`invoke name="`...)
				dst = append(dst, c.name...)
				dst = append(dst, "\">\n"...)
				dst = append(dst, c.arguments...)
				dst = append(dst, "\n</"+dsDSML+"invoke>"...)
			}
			dst = append(dst, "\n</"+dsDSML+"function_calls>"...)
		}
		dst = append(dst, dsEOS...)
	}
	return dst, nil
}
