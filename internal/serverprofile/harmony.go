package serverprofile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// Harmony is how vLLM prefills a gpt-oss chat request: not through the
// Jinja template but through the openai_harmony library
// (render_conversation_for_completion). The request is first made Harmony
// messages by vLLM's harmony_utils.py (vLLM main, index id 66806705518:
// extract_instructions_from_messages, build_harmony_preamble,
// parse_chat_inputs_to_harmony_messages, auto_drop_analysis_messages;
// VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS unset), then rendered as
// openai-harmony v0.0.8's src/encoding.rs renders them. The text is
// returned with the special tokens spelled out and placed by id (Fixed),
// the text between them encoded ordinarily as openai_harmony does (a
// content that spells "<|end|>" is text), with the model's tokenizer.json
// (o200k_harmony's vocabulary).
//
// The tools are rendered whenever the request has them, whatever its
// tool_choice (vLLM's should_include_tools with
// --exclude-tools-when-tool-choice-none off, its default).
//
// Not reproduced: a message whose
// tool_calls is null, which vLLM's loop over it would fail on, is read as
// one without tool calls.

// Harmony's fixed system text (SystemContent::default in chat.rs).
const (
	harmonyIdentity        = "You are ChatGPT, a large language model trained by OpenAI."
	harmonyKnowledgeCutoff = "2024-06"
	harmonyChannels        = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
	harmonyFunctionsNote   = "Calls to these tools must go to the commentary channel: 'functions'."
)

// harmonyMessage is one openai_harmony Message with text contents (the
// system and developer contents are rendered into text beforehand).
type harmonyMessage struct {
	role        string // system, developer, user, assistant, tool
	name        string // a tool message's author name ("functions.x")
	recipient   string
	channel     string
	contentType string
	text        string
	// parts, when there are two or more, are the text contents the text
	// joins: Harmony encodes each on its own.
	parts []string
}

// harmonyMaxDepth bounds the nesting of a tool's parameters schema that is
// rendered: a hostile body cannot recurse without limit.
const harmonyMaxDepth = 64

// renderHarmony is Render for a chat body under Harmony; noTools leaves
// the tools out and counts their texts bare on top (measure --no-tools).
func renderHarmony(ex *extract.Inputs, now time.Time, noTools bool, dst []byte) (Prompt, error) {
	if ex.Endpoint == endpoint.Responses {
		return renderHarmonyResponses(ex, now, noTools, dst)
	}
	msgsRaw, ok := ex.Body.Get("messages")
	if !ok {
		return Prompt{}, errors.New(`harmony: a chat body without "messages"`)
	}
	elems, err := jsonobj.Elements(msgsRaw)
	if err != nil {
		return Prompt{}, fmt.Errorf(`harmony: "messages": %w`, err)
	}
	msgs := make([]jsonobj.Object, 0, len(elems))
	for i, e := range elems {
		o, err := jsonobj.Members(bytes.TrimSpace(e))
		if err != nil || len(bytes.TrimSpace(e)) == 0 || bytes.TrimSpace(e)[0] != '{' {
			return Prompt{}, fmt.Errorf("harmony: messages[%d] is not an object", i)
		}
		msgs = append(msgs, o)
	}

	// extract_instructions_from_messages: a leading system or developer
	// message becomes the instructions.
	var instructions *string
	if len(msgs) > 0 {
		if r := strField(msgs[0], "role"); r == "system" || r == "developer" {
			instructions = flattenInputText(msgs[0], "content")
			msgs = msgs[1:]
		}
	}

	effort := ""
	if raw, ok := ex.Body.Get("reasoning_effort"); ok && string(raw) != "null" {
		s, err := jsonobj.String(raw)
		if err != nil {
			return Prompt{}, fmt.Errorf(`harmony: "reasoning_effort" is not a string`)
		}
		switch s {
		case "low", "medium", "high":
			effort = s
		default:
			return Prompt{}, refuse(VLLM, "harmony reasoning_effort", "reasoning_effort=%q is not supported by Harmony (low, medium, high)", s)
		}
	}

	tools, err := harmonyTools(ex.Body)
	if err != nil {
		return Prompt{}, err
	}
	var bare []string
	if noTools {
		tools, bare = nil, ex.ToolTexts
	}

	var out []harmonyMessage
	out = append(out, harmonyMessage{role: "system"}) // text set below
	if (instructions != nil && *instructions != "") || len(tools) > 0 {
		out = append(out, harmonyMessage{role: "developer", text: developerText(instructions, tools)})
	}

	conv, err := harmonyConversation(msgs)
	if err != nil {
		return Prompt{}, err
	}
	out = append(out, conv...)
	return appendHarmonyConversation(dst, out, nil, effort, now, len(tools) > 0, bare), nil
}

// appendHarmonyConversation renders out (its first message the system
// message, whose text is set here: identity, nil for Harmony's default,
// the effort, now as the start date, the functions note when a developer
// message carries function tools) as render_conversation_for_completion
// does, ending with the assistant's header.
func appendHarmonyConversation(dst []byte, out []harmonyMessage, identity *string, effort string, now time.Time, functionTools bool, bare []string) Prompt {
	if now.IsZero() {
		now = time.Now() // unpinned: the server's clock, as vLLM's datetime.now()
	}
	out[0].text = systemText(identity, effort, now, functionTools)

	// openai-harmony's own auto_drop_analysis (render_conversation_into):
	// when the last assistant message is final, analysis messages before
	// the first final one are dropped.
	lastFinal := false
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].role == "assistant" {
			lastFinal = out[i].channel == "final"
			break
		}
	}
	firstFinal := -1
	for i, m := range out {
		if m.channel == "final" {
			firstFinal = i
			break
		}
	}
	w := harmonyWriter{dst: dst}
	for i, m := range out {
		if lastFinal && firstFinal >= 0 && i < firstFinal && m.channel == "analysis" {
			continue
		}
		w.message(m)
	}
	w.special(harmonyStart)
	w.dst = append(w.dst, "assistant"...)
	return Prompt{Text: w.dst, Cuts: w.cuts, Fixed: w.fixed, Ordinary: true, Bare: bare}
}

// Harmony's special tokens in o200k_harmony, the encoding openai_harmony
// renders with (HARMONY_GPT_OSS), placed by id: the text around them is
// encoded ordinarily, so a content that spells one is text.
const (
	harmonyStart      = "<|start|>"
	harmonyEnd        = "<|end|>"
	harmonyMessageTok = "<|message|>"
	harmonyChannel    = "<|channel|>"
	harmonyCall       = "<|call|>"
)

var harmonyTokenIDs = map[string]int{harmonyStart: 200006, harmonyEnd: 200007, harmonyMessageTok: 200008, harmonyChannel: 200005, harmonyCall: 200012}

// harmonyWriter appends a Harmony prompt: its special tokens as Fixed
// spans, the places where the encoding of a message's text contents
// restarts as cuts.
type harmonyWriter struct {
	dst   []byte
	fixed []FixedToken
	cuts  []int
}

func (w *harmonyWriter) special(tok string) {
	start := len(w.dst)
	w.dst = append(w.dst, tok...)
	w.fixed = append(w.fixed, FixedToken{Start: start, End: len(w.dst), ID: harmonyTokenIDs[tok]})
}

// message renders m as openai_harmony's render does.
func (w *harmonyWriter) message(m harmonyMessage) {
	w.special(harmonyStart)
	if m.role == "tool" {
		w.dst = append(w.dst, m.name...)
	} else {
		w.dst = append(w.dst, m.role...)
	}
	if m.recipient != "" && m.recipient != "all" {
		w.dst = append(w.dst, " to="...)
		w.dst = append(w.dst, m.recipient...)
	}
	if m.channel != "" {
		w.special(harmonyChannel)
		w.dst = append(w.dst, m.channel...)
	}
	if m.contentType != "" {
		w.dst = append(w.dst, ' ')
		w.dst = append(w.dst, m.contentType...)
	}
	w.special(harmonyMessageTok)
	if len(m.parts) > 1 {
		for i, p := range m.parts {
			if i > 0 {
				w.cuts = append(w.cuts, len(w.dst))
			}
			w.dst = append(w.dst, p...)
		}
	} else {
		w.dst = append(w.dst, m.text...)
	}
	if m.role == "assistant" && m.recipient != "" {
		w.special(harmonyCall)
		return
	}
	w.special(harmonyEnd)
}

// systemText is Harmony's SystemContent as vLLM's get_system_message
// makes it: the model identity (Harmony's default when nil; the
// Responses path sets it from a system input item), the knowledge
// cutoff, the conversation start date (now, "%Y-%m-%d"), the reasoning
// effort (medium unless given), the valid channels.
func systemText(identity *string, effort string, now time.Time, functionTools bool) string {
	if effort == "" {
		effort = "medium"
	}
	var b strings.Builder
	if identity != nil {
		b.WriteString(*identity)
	} else {
		b.WriteString(harmonyIdentity)
	}
	b.WriteString("\nKnowledge cutoff: ")
	b.WriteString(harmonyKnowledgeCutoff)
	b.WriteString("\nCurrent date: ")
	b.WriteString(now.Format("2006-01-02"))
	b.WriteString("\n\nReasoning: ")
	b.WriteString(effort)
	b.WriteString("\n\n")
	b.WriteString(harmonyChannels)
	if functionTools {
		b.WriteString("\n")
		b.WriteString(harmonyFunctionsNote)
	}
	return b.String()
}

// harmonyTool is one function tool (ChatCompletionToolsParam).
type harmonyTool struct {
	name, description string
	parameters        *ordered // nil when absent or null
}

// harmonyTools reads the request's tools as vLLM's pydantic model does:
// every tool a function with a name.
func harmonyTools(body jsonobj.Object) ([]harmonyTool, error) {
	raw, ok := body.Get("tools")
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, fmt.Errorf(`harmony: "tools" is not an array`)
	}
	var out []harmonyTool
	for i, e := range elems {
		o, err := harmonyObject(e)
		if err != nil {
			return nil, fmt.Errorf("harmony: tools[%d] is not an object", i)
		}
		if typ := strField(o, "type"); typ != "function" {
			return nil, refuse(VLLM, "harmony tools", "tools[%d]: type %q is not a function tool", i, typ)
		}
		fraw, _ := o.Get("function")
		f, err := harmonyObject(fraw)
		if err != nil {
			return nil, refuse(VLLM, "harmony tools", "tools[%d].function is not an object", i)
		}
		nraw, ok := f.Get("name")
		if !ok || !jsonobj.IsString(nraw) {
			return nil, refuse(VLLM, "harmony tools", "tools[%d].function.name is not a string", i)
		}
		t := harmonyTool{name: strField(f, "name"), description: strField(f, "description")}
		if praw, ok := f.Get("parameters"); ok && string(bytes.TrimSpace(praw)) != "null" {
			v, err := decodeOrdered(praw, 0)
			if err != nil {
				return nil, fmt.Errorf("harmony: tools[%d].function.parameters: %w", i, err)
			}
			if v.kind != 'o' {
				return nil, refuse(VLLM, "harmony tools", "tools[%d].function.parameters is not an object", i)
			}
			t.parameters = v
		}
		out = append(out, t)
	}
	return out, nil
}

// developerText is Harmony's DeveloperContent: the instructions and the
// functions namespace.
func developerText(instructions *string, tools []harmonyTool) string {
	var sections []string
	if instructions != nil {
		sections = append(sections, "# Instructions", *instructions)
	}
	if len(tools) > 0 {
		sections = append(sections, toolsSection(tools))
	}
	return strings.Join(sections, "\n\n")
}

// toolsSection is template_tools_section for the one "functions"
// namespace (no namespace description).
func toolsSection(tools []harmonyTool) string {
	lines := []string{"## functions\n", "namespace functions {\n"}
	for _, t := range tools {
		for _, l := range rustLines(t.description) {
			lines = append(lines, "// "+l)
		}
		if t.parameters != nil {
			lines = append(lines, "type "+t.name+" = (_: "+schemaToTypeScript(t.parameters, "")+") => any;\n")
		} else {
			lines = append(lines, "type "+t.name+" = () => any;\n")
		}
	}
	lines = append(lines, "} // namespace functions")
	return "# Tools\n\n" + strings.Join(lines, "\n")
}

// rustLines is Rust's str::lines: split at "\n", a "\r" before it
// dropped, no final empty line.
func rustLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = strings.TrimSuffix(p, "\r")
	}
	return parts
}

// harmonyConversation is parse_chat_inputs_to_harmony_messages followed
// by vLLM's auto_drop_analysis_messages.
func harmonyConversation(msgs []jsonobj.Object) ([]harmonyMessage, error) {
	toolNames := map[string]string{}
	for _, m := range msgs {
		calls, _ := toolCalls(m)
		for _, c := range calls {
			// A call without a string id names no tool message (Python's
			// None key matches no tool_call_id).
			if id, ok := c.Get("id"); ok && jsonobj.IsString(id) {
				fn, _ := harmonyObject(rawField(c, "function"))
				toolNames[strField(c, "id")] = strField(fn, "name")
			}
		}
	}
	var out []harmonyMessage
	for i, m := range msgs {
		role := strField(m, "role")
		calls, err := toolCalls(m)
		if err != nil {
			return nil, fmt.Errorf("harmony: messages[%d].tool_calls: %w", i, err)
		}
		switch {
		case role == "assistant" && len(calls) > 0:
			if c := flattenInputText(m, "content"); c != nil && *c != "" {
				out = append(out, harmonyMessage{role: "assistant", channel: "commentary", text: *c})
			}
			if r := strField(m, "reasoning"); r != "" {
				out = append(out, harmonyMessage{role: "assistant", channel: "analysis", text: r})
			}
			for _, c := range calls {
				fn, _ := harmonyObject(rawField(c, "function"))
				out = append(out, harmonyMessage{role: "assistant", channel: "commentary",
					recipient: "functions." + strField(fn, "name"), contentType: "json", text: strField(fn, "arguments")})
			}
			continue
		case role == "tool":
			text := ""
			if c := flattenInputText(m, "content"); c != nil {
				text = *c
			}
			out = append(out, harmonyMessage{role: "tool", name: "functions." + toolNames[strField(m, "tool_call_id")],
				channel: "commentary", recipient: "assistant", text: text})
			continue
		}
		if r := strField(m, "reasoning"); role == "assistant" && r != "" {
			out = append(out, harmonyMessage{role: "assistant", channel: "analysis", text: r})
		}
		texts, err := contentTexts(m)
		if err != nil {
			return nil, fmt.Errorf("harmony: messages[%d].content: %w", i, err)
		}
		switch role {
		case "assistant":
			if len(texts) > 0 && texts[0] != "" {
				out = append(out, harmonyMessage{role: "assistant", channel: "final", text: strings.Join(texts, ""), parts: texts})
			}
		case "system", "developer":
			// get_system_or_developer_message: a developer message with
			// the instructions and no tools.
			if c := flattenInputText(m, "content"); c != nil {
				out = append(out, harmonyMessage{role: "developer", text: developerText(c, nil)})
			}
		case "user":
			out = append(out, harmonyMessage{role: "user", text: strings.Join(texts, ""), parts: texts})
		default:
			return nil, refuse(VLLM, "harmony roles", "messages[%d]: role %q is not a Harmony role", i, role)
		}
	}
	// auto_drop_analysis_messages: analysis before the last assistant
	// final message is dropped.
	last := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].role == "assistant" && out[i].channel == "final" {
			last = i
			break
		}
	}
	kept := out[:0]
	for i, m := range out {
		if i < last && m.channel == "analysis" {
			continue
		}
		kept = append(kept, m)
	}
	return kept, nil
}

// contentTexts is the default path's contents: a string is one text; a
// list gives each part's "text" ("" where it has none).
func contentTexts(m jsonobj.Object) ([]string, error) {
	raw, ok := m.Get("content")
	raw = bytes.TrimSpace(raw)
	if !ok || string(raw) == "null" || string(raw) == `""` || string(raw) == "[]" {
		return []string{""}, nil
	}
	if jsonobj.IsString(raw) {
		s, err := jsonobj.String(raw)
		return []string{s}, err
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, errors.New("neither a string nor a list")
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		p, err := harmonyObject(e)
		if err != nil {
			return nil, errors.New("a part is not an object")
		}
		out = append(out, strField(p, "text"))
	}
	return out, nil
}

// flattenInputText is flatten_input_text_content: nil for null or absent
// or a non-list; a string as it is; a list's string items and its
// objects' "text" joined with "" (nil when there are none).
func flattenInputText(m jsonobj.Object, key string) *string {
	raw, ok := m.Get(key)
	raw = bytes.TrimSpace(raw)
	if !ok || string(raw) == "null" {
		return nil
	}
	if jsonobj.IsString(raw) {
		s, _ := jsonobj.String(raw)
		return &s
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil
	}
	var texts []string
	for _, e := range elems {
		if jsonobj.IsString(e) {
			s, _ := jsonobj.String(e)
			texts = append(texts, s)
			continue
		}
		if p, err := harmonyObject(e); err == nil {
			if t, ok := p.Get("text"); ok && jsonobj.IsString(t) {
				s, _ := jsonobj.String(t)
				texts = append(texts, s)
			}
		}
	}
	if texts == nil {
		return nil
	}
	s := strings.Join(texts, "")
	return &s
}

func toolCalls(m jsonobj.Object) ([]jsonobj.Object, error) {
	raw, ok := m.Get("tool_calls")
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, errors.New("not a list")
	}
	out := make([]jsonobj.Object, 0, len(elems))
	for _, e := range elems {
		o, err := harmonyObject(e)
		if err != nil {
			return nil, errors.New("a tool call is not an object")
		}
		out = append(out, o)
	}
	return out, nil
}

func harmonyObject(raw json.RawMessage) (jsonobj.Object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	return jsonobj.Members(raw)
}

func rawField(o jsonobj.Object, key string) json.RawMessage {
	v, _ := o.Get(key)
	return v
}

// strField is o[key] when it is a string, else "".
func strField(o jsonobj.Object, key string) string {
	raw, ok := o.Get(key)
	if !ok || !jsonobj.IsString(raw) {
		return ""
	}
	s, _ := jsonobj.String(raw)
	return s
}

// ordered is a JSON value with its objects' keys in document order, as
// serde_json with preserve_order keeps them (a repeated key keeps its
// first place and takes its last value, as Python's dict does).
type ordered struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*ordered
	str  string // string value, or the number's or bool's literal
}

func decodeOrdered(raw []byte, depth int) (*ordered, error) {
	if depth > harmonyMaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", harmonyMaxDepth)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("empty value")
	}
	switch raw[0] {
	case '{':
		mem, err := jsonobj.Members(raw)
		if err != nil {
			return nil, err
		}
		v := &ordered{kind: 'o'}
		index := map[string]int{}
		for _, m := range mem {
			c, err := decodeOrdered(m.Value, depth+1)
			if err != nil {
				return nil, err
			}
			if i, ok := index[m.Key]; ok {
				v.vals[i] = c
				continue
			}
			index[m.Key] = len(v.keys)
			v.keys = append(v.keys, m.Key)
			v.vals = append(v.vals, c)
		}
		return v, nil
	case '[':
		elems, err := jsonobj.Elements(raw)
		if err != nil {
			return nil, err
		}
		v := &ordered{kind: 'a'}
		for _, e := range elems {
			c, err := decodeOrdered(e, depth+1)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, c)
		}
		return v, nil
	case '"':
		s, err := jsonobj.String(raw)
		return &ordered{kind: 's', str: s}, err
	case 't', 'f':
		return &ordered{kind: 'b', str: string(raw)}, nil
	case 'n':
		return &ordered{kind: 'z'}, nil
	}
	return &ordered{kind: 'n', str: string(raw)}, nil
}

// get is serde_json's Value::get: nil unless v is an object with key.
func (v *ordered) get(key string) *ordered {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

func (v *ordered) asStr() (string, bool) {
	if v == nil || v.kind != 's' {
		return "", false
	}
	return v.str, true
}

// display is serde_json's compact Display of v.
func (v *ordered) display(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			quoteJSON(b, k)
			b.WriteByte(':')
			v.vals[i].display(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, c := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			c.display(b)
		}
		b.WriteByte(']')
	case 's':
		quoteJSON(b, v.str)
	case 'z':
		b.WriteString("null")
	case 'b':
		b.WriteString(v.str)
	case 'n':
		b.WriteString(serdeNumber(v.str))
	}
}

// serdeNumber is how a number of the request, read by Python's json and
// written again for serde_json, displays: integers as they are, other
// numbers as f64 (ryu's shortest form, ".0" on whole values).
func serdeNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return lit
		}
		if _, err := strconv.ParseUint(lit, 10, 64); err == nil {
			return lit
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs != 0 && (abs >= 1e16 || abs < 1e-5) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		s = strings.Replace(s, "e+", "e", 1)
		s = strings.Replace(s, "e-0", "e-", 1)
		if i := strings.Index(s, "e0"); i >= 0 {
			s = s[:i+1] + s[i+2:]
		}
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func (v *ordered) displayString() string {
	var b strings.Builder
	v.display(&b)
	return b.String()
}

func isEnum(v *ordered) bool {
	e := v.get("enum")
	return e != nil && e.kind == 'a' && len(e.vals) > 0
}

func nullable(v *ordered) bool {
	n := v.get("nullable")
	return n != nil && n.kind == 'b' && n.str == "true"
}

// defaultComment is the text after "default: " for d in a property or
// variant of schema s: a string quoted unless s is an enum, where a
// property shows it bare and a top-level oneOf variant (property false)
// as JSON.
func defaultComment(s, d *ordered, property bool) string {
	if str, ok := d.asStr(); ok {
		if !isEnum(s) {
			return `"` + str + `"`
		}
		if property {
			return str
		}
	}
	return d.displayString()
}

// schemaToTypeScript is openai-harmony's json_schema_to_typescript
// (src/encoding.rs, v0.0.8), line for line.
func schemaToTypeScript(s *ordered, indent string) string {
	if one := s.get("oneOf"); one != nil && one.kind == 'a' {
		var b strings.Builder
		for _, variant := range one.vals {
			b.WriteString("\n" + indent + " | ")
			ts := schemaToTypeScript(variant, indent+"   ")
			if nullable(variant) && !strings.Contains(ts, "null") {
				ts += " | null"
			}
			b.WriteString(ts)
			var trailing []string
			if d, ok := variant.get("description").asStr(); ok {
				trailing = append(trailing, d)
			}
			if d := variant.get("default"); d != nil {
				trailing = append(trailing, "default: "+defaultComment(variant, d, false))
			}
			if len(trailing) > 0 {
				b.WriteString(" // " + strings.Join(trailing, " "))
			}
		}
		return b.String()
	}
	if types := s.get("type"); types != nil && types.kind == 'a' {
		var ts []string
		for _, t := range types.vals {
			if str, ok := t.asStr(); ok {
				if str == "integer" {
					str = "number"
				}
				ts = append(ts, str)
			}
		}
		if len(ts) > 0 {
			return strings.Join(ts, " | ")
		}
	}
	typ, ok := s.get("type").asStr()
	if !ok {
		return "any" // a oneOf that is a list was handled above
	}
	switch typ {
	case "object":
		var b strings.Builder
		if d, ok := s.get("description").asStr(); ok {
			b.WriteString(indent + "// " + d + "\n")
		}
		b.WriteString("{\n")
		if props := s.get("properties"); props != nil && props.kind == 'o' {
			required := map[string]bool{}
			if req := s.get("required"); req != nil && req.kind == 'a' {
				for _, r := range req.vals {
					if str, ok := r.asStr(); ok {
						required[str] = true
					}
				}
			}
			for i, key := range props.keys {
				writeProperty(&b, key, props.vals[i], required[key], indent)
			}
		}
		b.WriteString(indent + "}")
		return b.String()
	case "string":
		if e := s.get("enum"); e != nil && e.kind == 'a' {
			var vals []string
			for _, v := range e.vals {
				if str, ok := v.asStr(); ok {
					vals = append(vals, `"`+str+`"`)
				}
			}
			if len(vals) > 0 {
				return strings.Join(vals, " | ")
			}
		}
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		if items := s.get("items"); items != nil {
			return schemaToTypeScript(items, indent) + "[]"
		}
		return "Array<any>"
	}
	return "any"
}

func writeProperty(b *strings.Builder, key string, val *ordered, required bool, indent string) {
	opt := "?"
	if required {
		opt = ""
	}
	if t, ok := val.get("title").asStr(); ok {
		b.WriteString(indent + "// " + t + "\n" + indent + "//\n")
	}
	one := val.get("oneOf")
	if one == nil {
		if d, ok := val.get("description").asStr(); ok {
			b.WriteString(indent + "// " + d + "\n")
		}
	}
	if ex := val.get("examples"); ex != nil && ex.kind == 'a' && len(ex.vals) > 0 {
		b.WriteString(indent + "// Examples:\n")
		for _, e := range ex.vals {
			if str, ok := e.asStr(); ok {
				b.WriteString(indent + "// - \"" + str + "\"\n")
			}
		}
	}
	if one != nil && one.kind == 'a' {
		propDesc, hasDesc := val.get("description").asStr()
		skip := false
		if hasDesc && len(one.vals) > 0 {
			if vd, ok := one.vals[0].get("description").asStr(); ok && vd == propDesc {
				skip = true
			}
		}
		above := false
		if !skip && hasDesc {
			b.WriteString(indent + "// " + propDesc + "\n")
			above = true
		}
		if d := val.get("default"); d != nil {
			b.WriteString(indent + "// default: " + defaultComment(val, d, true) + "\n")
		}
		b.WriteString(indent + key + opt + ":\n")
		for i, variant := range one.vals {
			b.WriteString(indent + " | ")
			ts := schemaToTypeScript(variant, indent+"   ")
			if nullable(variant) && !strings.Contains(ts, "null") {
				ts += " | null"
			}
			b.WriteString(ts)
			var trailing []string
			if i == 0 && above {
			} else if d, ok := variant.get("description").asStr(); ok && !(hasDesc && d == propDesc) {
				trailing = append(trailing, d)
			}
			if d := variant.get("default"); d != nil {
				trailing = append(trailing, "default: "+defaultComment(variant, d, true))
			}
			if len(trailing) > 0 {
				b.WriteString(" // " + strings.Join(trailing, " "))
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + ",\n")
		return
	}
	b.WriteString(indent + key + opt + ": ")
	ts := schemaToTypeScript(val, indent+"    ")
	if nullable(val) && !strings.Contains(ts, "null") {
		ts += " | null"
	}
	b.WriteString(ts + ",")
	if one == nil {
		if d := val.get("default"); d != nil {
			b.WriteString(" // default: " + defaultComment(val, d, true))
		}
	}
	b.WriteString("\n")
}
