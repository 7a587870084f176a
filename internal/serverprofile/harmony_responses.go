package serverprofile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// renderHarmonyResponses is Render for a Responses body under Harmony, as
// vLLM's Responses server makes it Harmony messages: vLLM main's
// responses/serving.py @0001948b (_make_request_with_harmony,
// _construct_input_messages_with_harmony,
// _extract_system_message_from_request), responses/harmony.py @004ae2c0
// (response_input_to_harmony, construct_harmony_previous_input_messages)
// and harmony_utils.py (index id 66806705518), with no tool server and
// VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS and
// VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS unset. It is not the chat path:
//   - the system message's model identity is the first system input
//     item's text (its content string, or its first input_text part);
//   - a developer message is written only when the request has a tool
//     other than the built-in ones (has_custom_tools), and only then do
//     the instructions count: without such a tool vLLM drops them;
//   - system and developer input items become developer messages (the
//     first system item is also the identity); an assistant message is
//     final; a reasoning item with content is analysis (its texts joined
//     by "\n"; one without content is skipped); a function call is a
//     commentary call to functions.<name>; a function call output is
//     the tool's answer, named by the last function call before it with
//     its call_id (none: vLLM refuses the request);
//   - previous_input_messages (vLLM's extension; chat-format or
//     Harmony-format messages) come before the input, their system and
//     developer messages dropped;
//   - only Harmony's own analysis dropping applies (vLLM's
//     auto_drop_analysis_messages is the chat path's).
//
// Not reproduced (refused): previous_response_id (the server's stored
// Harmony messages), a function call output that is not a string.
func renderHarmonyResponses(ex *extract.Inputs, now time.Time, noTools bool, dst []byte) (Prompt, error) {
	body := ex.Body
	if raw, ok := body.Get("previous_response_id"); ok && !isNull(raw) {
		return Prompt{}, refuse(VLLM, "harmony previous_response_id", "a Responses body continuing a stored response is rendered from the server's stored Harmony messages, which a body alone does not hold")
	}
	if raw, ok := body.Get("tool_choice"); ok {
		s, isStr := str(raw)
		if !isStr || (s != "auto" && s != "none") {
			return Prompt{}, refuse(VLLM, "harmony tool_choice", "only 'auto' or 'none' tool_choice is supported in response API with Harmony")
		}
	}
	effort, err := harmonyResponsesEffort(body)
	if err != nil {
		return Prompt{}, err
	}
	tools, custom, err := harmonyResponsesTools(body)
	if err != nil {
		return Prompt{}, err
	}
	var bare []string
	if noTools {
		tools, custom, bare = nil, false, ex.ToolTexts
	}

	out := []harmonyMessage{{role: "system"}} // text set by appendHarmonyConversation
	if custom {
		var instructions *string
		if raw, ok := body.Get("instructions"); ok && !isNull(raw) {
			s, isStr := str(raw)
			if !isStr {
				return Prompt{}, errors.New(`harmony: "instructions" is not a string`)
			}
			instructions = &s
		}
		out = append(out, harmonyMessage{role: "developer", text: developerText(instructions, tools)})
	}
	if raw, ok := body.Get("previous_input_messages"); ok && !isNull(raw) {
		prev, err := harmonyPreviousMessages(raw)
		if err != nil {
			return Prompt{}, err
		}
		out = append(out, prev...)
	}

	var identity *string
	switch {
	case ex.StringInput:
		prev, _ := body.Get("previous_input_messages")
		if ex.InputText != "" || !harmonyNonEmptyList(prev) {
			out = append(out, harmonyMessage{role: "user", text: ex.InputText})
		}
	default:
		raw, _ := body.Get("input")
		items, err := jsonobj.Elements(raw)
		if err != nil {
			return Prompt{}, errors.New(`harmony: "input" is neither a string nor a list`)
		}
		identity = harmonyIdentityOf(items)
		if out, err = harmonyInputItems(out, items); err != nil {
			return Prompt{}, err
		}
	}
	return appendHarmonyConversation(dst, out, identity, effort, now, len(tools) > 0, bare), nil
}

// harmonyResponsesEffort is request.reasoning.effort, checked as
// get_system_message checks it.
func harmonyResponsesEffort(body jsonobj.Object) (string, error) {
	raw, ok := body.Get("reasoning")
	if !ok || isNull(raw) {
		return "", nil
	}
	r, err := harmonyObject(raw)
	if err != nil {
		return "", errors.New(`harmony: "reasoning" is not an object`)
	}
	e, ok := r.Get("effort")
	if !ok || isNull(e) {
		return "", nil
	}
	s, _ := str(e)
	switch s {
	case "low", "medium", "high":
		return s, nil
	}
	return "", refuse(VLLM, "harmony reasoning_effort", "reasoning.effort=%s is not supported by Harmony (low, medium, high)", bytes.TrimSpace(e))
}

// harmonyResponsesTools reads the Responses tools: the function tools,
// and whether there is a custom tool (one other than the built-in
// web_search_preview, code_interpreter and container; an mcp tool adds
// nothing, its label not allow-listed). With a custom tool vLLM's
// get_developer_message refuses any tool that is neither a function nor
// built in.
func harmonyResponsesTools(body jsonobj.Object) (tools []harmonyTool, custom bool, err error) {
	raw, ok := body.Get("tools")
	if !ok || isNull(raw) {
		return nil, false, nil
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, false, errors.New(`harmony: "tools" is not an array`)
	}
	var other string
	for i, e := range elems {
		o, err := harmonyObject(e)
		if err != nil {
			return nil, false, fmt.Errorf("harmony: tools[%d] is not an object", i)
		}
		typ := strField(o, "type")
		switch typ {
		case "web_search_preview", "code_interpreter", "container", "mcp":
			continue
		case "function":
			custom = true
		default:
			custom = true
			if other == "" {
				other = typ
			}
			continue
		}
		nraw, ok := o.Get("name")
		if !ok || !jsonobj.IsString(nraw) {
			return nil, false, refuse(VLLM, "harmony tools", "tools[%d].name is not a string", i)
		}
		t := harmonyTool{name: strField(o, "name"), description: strField(o, "description")}
		if praw, ok := o.Get("parameters"); ok && !isNull(praw) {
			v, err := decodeOrdered(praw, 0)
			if err != nil {
				return nil, false, fmt.Errorf("harmony: tools[%d].parameters: %w", i, err)
			}
			if v.kind != 'o' {
				return nil, false, refuse(VLLM, "harmony tools", "tools[%d].parameters is not an object", i)
			}
			t.parameters = v
		}
		tools = append(tools, t)
	}
	if other != "" || (custom && hasType(elems, "mcp")) {
		if other == "" {
			other = "mcp"
		}
		return nil, false, refuse(VLLM, "harmony tools", "tool type %s not supported", other)
	}
	return tools, custom, nil
}

func hasType(elems []json.RawMessage, typ string) bool {
	for _, e := range elems {
		if o, err := harmonyObject(e); err == nil && strField(o, "type") == typ {
			return true
		}
	}
	return false
}

// harmonyIdentityOf is _extract_system_message_from_request: the first
// system item's content string, or the text of its first input_text
// part (nil when it has none).
func harmonyIdentityOf(items []json.RawMessage) *string {
	for _, e := range items {
		o, err := harmonyObject(e)
		if err != nil || strField(o, "role") != "system" {
			continue
		}
		c, _ := o.Get("content")
		if jsonobj.IsString(c) {
			s, _ := jsonobj.String(c)
			return &s
		}
		parts, err := jsonobj.Elements(c)
		if err != nil {
			return nil
		}
		for _, p := range parts {
			po, err := harmonyObject(p)
			if err == nil && strField(po, "type") == "input_text" {
				s := strField(po, "text")
				return &s
			}
		}
		return nil
	}
	return nil
}

// harmonyInputItems appends the Harmony messages of the input items
// (response_input_to_harmony, system messages left out).
func harmonyInputItems(out []harmonyMessage, items []json.RawMessage) ([]harmonyMessage, error) {
	type call struct{ id, name string }
	var calls []call // the function calls so far (prev_outputs)
	for i, e := range items {
		o, err := harmonyObject(e)
		if err != nil {
			return nil, fmt.Errorf("harmony: input[%d] is not an object", i)
		}
		typ := "message"
		if raw, ok := o.Get("type"); ok {
			if !jsonobj.IsString(raw) {
				return nil, refuse(VLLM, "harmony input", "input[%d].type is not a string", i)
			}
			typ = strField(o, "type")
		}
		switch typ {
		case "message":
			role := strField(o, "role")
			craw, ok := o.Get("content")
			if !ok {
				return nil, refuse(VLLM, "harmony input", "input[%d] has no content", i)
			}
			switch role {
			case "system", "developer":
				if t := flattenInputText(o, "content"); t != nil && *t != "" {
					out = append(out, harmonyMessage{role: "developer", text: developerText(t, nil)})
				}
				continue
			case "user", "assistant":
			default:
				return nil, refuse(VLLM, "harmony input", "input[%d]: role %q is not a Harmony role", i, role)
			}
			var texts []string
			if jsonobj.IsString(craw) {
				s, _ := jsonobj.String(craw)
				texts = []string{s}
			} else {
				parts, err := jsonobj.Elements(craw)
				if err != nil {
					return nil, refuse(VLLM, "harmony input", "input[%d].content is neither a string nor a list", i)
				}
				for j, p := range parts {
					po, err := harmonyObject(p)
					if err != nil {
						return nil, refuse(VLLM, "harmony input", "input[%d].content[%d] is not an object", i, j)
					}
					texts = append(texts, strField(po, "text"))
				}
			}
			m := harmonyMessage{role: role, text: strings.Join(texts, ""), parts: texts}
			if role == "assistant" {
				m.channel = "final"
			}
			out = append(out, m)
		case "function_call":
			id, okID := o.Get("call_id")
			name, okName := o.Get("name")
			args, okArgs := o.Get("arguments")
			if !okID || !okName || !okArgs || !jsonobj.IsString(id) || !jsonobj.IsString(name) || !jsonobj.IsString(args) {
				return nil, refuse(VLLM, "harmony input", "input[%d]: a function_call needs string call_id, name and arguments", i)
			}
			calls = append(calls, call{strField(o, "call_id"), strField(o, "name")})
			out = append(out, harmonyMessage{role: "assistant", channel: "commentary",
				recipient: "functions." + strField(o, "name"), contentType: "json", text: strField(o, "arguments")})
		case "function_call_output":
			id := strField(o, "call_id")
			name, found := "", false
			for j := len(calls) - 1; j >= 0; j-- {
				if calls[j].id == id {
					name, found = calls[j].name, true
					break
				}
			}
			if !found {
				return nil, refuse(VLLM, "harmony input", "input[%d]: no call message found for %s", i, id)
			}
			raw, _ := o.Get("output")
			if !jsonobj.IsString(raw) {
				return nil, refuse(VLLM, "harmony input", "input[%d]: a function_call_output whose output is not a string is not reproduced", i)
			}
			out = append(out, harmonyMessage{role: "tool", name: "functions." + name, channel: "commentary",
				recipient: "assistant", text: strField(o, "output")})
		case "reasoning":
			if _, ok := o.Get("id"); !ok {
				return nil, refuse(VLLM, "harmony input", "input[%d]: a reasoning item needs an id and a summary", i)
			}
			if _, ok := o.Get("summary"); !ok {
				return nil, refuse(VLLM, "harmony input", "input[%d]: a reasoning item needs an id and a summary", i)
			}
			craw, _ := o.Get("content")
			parts, err := jsonobj.Elements(craw)
			if err != nil || len(parts) == 0 {
				continue // "if content and len(content) >= 1", else skipped
			}
			texts := make([]string, 0, len(parts))
			for j, p := range parts {
				po, err := harmonyObject(p)
				if err != nil {
					return nil, refuse(VLLM, "harmony input", "input[%d].content[%d] is not an object", i, j)
				}
				texts = append(texts, strField(po, "text"))
			}
			out = append(out, harmonyMessage{role: "assistant", channel: "analysis", text: strings.Join(texts, "\n")})
		default:
			return nil, refuse(VLLM, "harmony input", "input[%d]: unknown input type %q", i, typ)
		}
	}
	return out, nil
}

// harmonyPreviousMessages is construct_harmony_previous_input_messages:
// Harmony-format messages ({"author": ...}) and chat-format ones, their
// system and developer messages dropped.
func harmonyPreviousMessages(raw []byte) ([]harmonyMessage, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, errors.New(`harmony: "previous_input_messages" is not a list`)
	}
	var out []harmonyMessage
	for i, e := range elems {
		o, err := harmonyObject(e)
		if err != nil {
			return nil, fmt.Errorf("harmony: previous_input_messages[%d] is not an object", i)
		}
		if a, ok := o.Get("author"); ok {
			if ao, err := harmonyObject(a); err == nil {
				m, keep, err := harmonyFormatMessage(o, ao, i)
				if err != nil {
					return nil, err
				}
				if keep {
					out = append(out, m)
				}
				continue
			}
		}
		ms, err := chatFormatMessage(o, i)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// harmonyFormatMessage is _parse_harmony_format_message; keep is false for
// the system and developer messages the caller drops.
func harmonyFormatMessage(o, author jsonobj.Object, i int) (harmonyMessage, bool, error) {
	role, name := strField(author, "role"), strField(author, "name")
	switch role {
	case "system", "developer":
		return harmonyMessage{}, false, nil
	case "user", "assistant", "tool":
	default:
		return harmonyMessage{}, false, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d]: role %q is not a Harmony role", i, role)
	}
	if (name == "") == (role == "tool") {
		return harmonyMessage{}, false, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d]: an author name is reproduced on (and only on) a tool message", i)
	}
	var texts []string
	c, _ := o.Get("content")
	switch {
	case jsonobj.IsString(c):
		s, _ := jsonobj.String(c)
		texts = []string{s}
	default:
		parts, err := jsonobj.Elements(c)
		if err != nil || c == nil {
			texts = []string{""}
			break
		}
		for j, p := range parts {
			po, err := harmonyObject(p)
			if err != nil {
				return harmonyMessage{}, false, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d].content[%d] is not an object", i, j)
			}
			texts = append(texts, strField(po, "text"))
		}
	}
	m := harmonyMessage{role: role, name: name, text: strings.Join(texts, ""), parts: texts,
		channel: strField(o, "channel"), recipient: strField(o, "recipient"), contentType: strField(o, "content_type")}
	return m, true, nil
}

// chatFormatMessage is _parse_chat_format_message, less the system and
// developer messages the caller drops.
func chatFormatMessage(o jsonobj.Object, i int) ([]harmonyMessage, error) {
	rraw, ok := o.Get("role")
	if !ok || isNull(rraw) {
		return nil, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d] has no role", i)
	}
	role := strField(o, "role")
	calls, err := toolCalls(o)
	if err != nil {
		return nil, fmt.Errorf("harmony: previous_input_messages[%d].tool_calls: %w", i, err)
	}
	switch {
	case role == "assistant" && len(calls) > 0:
		var out []harmonyMessage
		for _, c := range calls {
			fn, _ := harmonyObject(rawField(c, "function"))
			out = append(out, harmonyMessage{role: "assistant", channel: "commentary",
				recipient: "functions." + strField(fn, "name"), contentType: "json", text: strField(fn, "arguments")})
		}
		return out, nil
	case role == "tool":
		name := strField(o, "name")
		if name != "" && !strings.HasPrefix(name, "functions.") {
			name = "functions." + name
		}
		if name == "" {
			return nil, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d]: a tool message without a name is not reproduced", i)
		}
		text := ""
		if t := flattenInputText(o, "content"); t != nil {
			text = *t
		}
		return []harmonyMessage{{role: "tool", name: name, channel: "commentary", recipient: "assistant", text: text}}, nil
	case role == "system" || role == "developer":
		return nil, nil
	case role == "user" || role == "assistant":
	default:
		return nil, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d]: role %q is not a Harmony role", i, role)
	}
	c, ok := o.Get("content")
	if !ok {
		return []harmonyMessage{{role: role}}, nil // content defaults to ""
	}
	if jsonobj.IsString(c) {
		s, _ := jsonobj.String(c)
		return []harmonyMessage{{role: role, text: s}}, nil
	}
	parts, err := jsonobj.Elements(c)
	if err != nil || isNull(c) {
		return nil, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d].content is neither a string nor a list", i)
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		po, err := harmonyObject(p)
		if err != nil {
			return nil, refuse(VLLM, "harmony previous_input_messages", "previous_input_messages[%d].content[%d] is not an object", i, j)
		}
		texts = append(texts, strField(po, "text"))
	}
	return []harmonyMessage{{role: role, text: strings.Join(texts, ""), parts: texts}}, nil
}

// harmonyNonEmptyList reports whether raw is a list with elements (Python's
// truthiness of previous_input_messages).
func harmonyNonEmptyList(raw []byte) bool {
	elems, err := jsonobj.Elements(raw)
	return raw != nil && err == nil && len(elems) > 0
}
