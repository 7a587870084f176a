package serverprofile

import (
	"bytes"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// prepareTools applies the tools rule of p.
func prepareTools(p Profile, b *body, ex *extract.Inputs, req *Request) error {
	switch p {
	case VLLM:
		if b.tools == nil {
			return nil
		}
		tools, err := toolList(p, b.tools)
		if err != nil {
			return err
		}
		if len(tools) == 0 {
			// §1.6: "`tools` must not be an empty array"
			// (online_renderer.py @01063cd0).
			return refuse(p, "tools must not be an empty array", "")
		}
		// §1.6: tool.model_dump() for every tool, also with tool_choice
		// "none" (--exclude-tools-when-tool-choice-none is off by default);
		// ChatCompletionToolsParam keeps only type and function, and
		// FunctionDefinition emits description and parameters as null
		// when missing, extra fields after them (engine/protocol.py
		// @040a2cc2, chat_completion/protocol.py @002032ee).
		out := make([]chat.Object, len(tools))
		for i, t := range tools {
			fn := chat.Object{{Key: "name", Value: t.fn.name}, {Key: "description", Value: t.fn.get("description")}, {Key: "parameters", Value: t.fn.get("parameters")}}
			for _, m := range t.fn.obj {
				if m.Key != "name" && m.Key != "description" && m.Key != "parameters" {
					fn = append(fn, chat.Field{Key: m.Key, Value: m.Value})
				}
			}
			out[i] = chat.Object{{Key: "type", Value: t.typ}, {Key: "function", Value: fn}}
		}
		req.Tools = out
	case SGLang:
		if b.tools == nil {
			return nil
		}
		tools, err := toolList(p, b.tools)
		if err != nil {
			return err
		}
		// §5: tools only when "request.tools and request.tool_choice !=
		// 'none'"; a named tool_choice keeps that tool
		// (serving_chat.py @002897c2 _process_messages).
		choice, named := toolChoice(b.toolChoice)
		if len(tools) == 0 || choice == "none" {
			return nil
		}
		var out, flat []chat.Object
		for _, t := range tools {
			if named && t.fn.nameString != choice {
				continue
			}
			fn := sglangFunction(t)
			out = append(out, chat.Object{{Key: "type", Value: t.typ}, {Key: "function", Value: fn}, {Key: "defer_loading", Value: t.get("defer_loading")}})
			flat = append(flat, fn)
		}
		if out == nil {
			out = []chat.Object{}
			flat = []chat.Object{}
		}
		req.Tools, req.FlatTools = out, flat
	case Transformers:
		if b.tools != nil {
			req.Tools = b.tools // as given
		}
	case AIPerf:
		// aiperf-behaviour.md §6.3: tools are not rendered; their texts
		// are counted bare and added.
		req.BareTexts = ex.ToolTexts
	}
	return nil
}

// sglangFunction is Tool.model_dump()'s function (protocol.py, SGLang
// 0.5.23): description, name, parameters, and strict and defer_loading
// unless None (a Tool's defer_loading is copied onto a function without
// one); in the client's key order, the fields it left out (description)
// after.
func sglangFunction(t tool) chat.Object {
	deferLoading := t.fn.get("defer_loading")
	if deferLoading == nil {
		deferLoading = t.get("defer_loading")
	}
	fields := chat.Object{{Key: "description", Value: t.fn.get("description")}, {Key: "name", Value: t.fn.name}, {Key: "parameters", Value: t.fn.get("parameters")}}
	if v := t.fn.get("strict"); v != nil {
		fields = append(fields, chat.Field{Key: "strict", Value: v})
	}
	if deferLoading != nil {
		fields = append(fields, chat.Field{Key: "defer_loading", Value: deferLoading})
	}
	fn := make(chat.Object, 0, len(fields))
	placed := make([]bool, len(fields))
	for _, m := range t.fn.obj {
		for i, f := range fields {
			if f.Key == m.Key && !placed[i] {
				fn, placed[i] = append(fn, f), true
			}
		}
	}
	for i, f := range fields {
		if !placed[i] {
			fn = append(fn, f)
		}
	}
	return fn
}

type tool struct {
	obj jsonobj.Object
	typ any
	fn  function
}

func (t tool) get(k string) any {
	if v, ok := t.obj.Get(k); ok && !isNull(v) {
		return v
	}
	return nil
}

type function struct {
	obj        jsonobj.Object
	name       any
	nameString string
}

func (f function) get(k string) any {
	if v, ok := f.obj.Get(k); ok && !isNull(v) {
		return v
	}
	return nil
}

// toolList validates tools the way the servers' pydantic models do: a list
// of objects, each with a function object that has a name.
func toolList(p Profile, raw json.RawMessage) ([]tool, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, refuse(p, "tools must be a list", "")
	}
	out := make([]tool, len(elems))
	for i, e := range elems {
		obj, err := jsonobj.Members(e)
		if err != nil {
			return nil, refuse(p, "a tool must be an object", "tools[%d]", i)
		}
		t := tool{obj: obj, typ: "function"}
		if v := t.get("type"); v != nil {
			t.typ = v
		}
		fnRaw, _ := obj.Get("function")
		fnObj, err := jsonobj.Members(fnRaw)
		if fnRaw == nil || err != nil {
			return nil, refuse(p, "a tool needs a function object", "tools[%d].function", i)
		}
		name, _ := fnObj.Get("name")
		s, ok := str(name)
		if !ok {
			return nil, refuse(p, "a tool function needs a string name", "tools[%d].function.name", i)
		}
		t.fn = function{obj: fnObj, name: name, nameString: s}
		out[i] = t
	}
	return out, nil
}

// toolChoice reads tool_choice: a string, or the function name of a named
// choice (named is then true).
func toolChoice(raw json.RawMessage) (string, bool) {
	if s, ok := str(raw); ok {
		return s, false
	}
	obj, err := jsonobj.Members(raw)
	if raw == nil || err != nil {
		return "", false
	}
	fn, _ := obj.Get("function")
	fo, err := jsonobj.Members(fn)
	if fn == nil || err != nil {
		return "", false
	}
	name, _ := fo.Get("name")
	s, _ := str(name)
	return s, true
}

// prepareKwargs applies the template-kwargs rule of p (§1.7, §5).
func prepareKwargs(p Profile, b *body, req *Request) error {
	switch p {
	case VLLM:
		kw := map[string]any{}
		for _, m := range b.kwargs {
			switch m.Key {
			case "chat_template", "tokenize":
				// resolve_chat_template_kwargs (renderers/hf.py @02e64f58).
				return refuse(p, "chat_template_kwargs may not set chat_template or tokenize", "%q", m.Key)
			case "add_generation_prompt", "continue_final_message":
				// merge_kwargs: the request's fields (always set, with
				// their defaults) override these (params.py @017638d7).
			case "documents":
				req.Documents = m.Value
			case "tools":
				// tools are a default that chat_template_kwargs override.
				req.Tools = m.Value
			default:
				kw[m.Key] = m.Value
			}
		}
		if b.documents != nil {
			req.Documents = b.documents
		}
		if b.reasoningEffort != nil {
			if s, _ := str(b.reasoningEffort); s != "auto" {
				kw["reasoning_effort"] = b.reasoningEffort
				// build_chat_params: enable_thinking follows
				// reasoning_effort unless the request sets it.
				if !b.kwargs.Has("enable_thinking") {
					kw["enable_thinking"] = s != "none"
				}
			}
		}
		if len(kw) > 0 {
			req.Kwargs = kw
		}
	case SGLang:
		kw := map[string]any{}
		effort, thinking, err := sglangReasoning(b.obj)
		if err != nil {
			return err
		}
		if effort != nil {
			kw["reasoning_effort"] = effort
		}
		if thinking != nil {
			// The defaults of both keys: the request's
			// chat_template_kwargs, set below, win.
			kw["thinking"], kw["enable_thinking"] = *thinking, *thinking
		}
		for _, m := range b.kwargs {
			switch m.Key {
			case "add_generation_prompt", "tools", "tokenize", "return_dict":
				// Passed again next to apply_chat_template's own
				// arguments: a TypeError, which SGLang reports as a 400.
				return refuse(p, "chat_template_kwargs repeats an apply_chat_template argument", "%q", m.Key)
			case "continue_final_message":
				if string(bytes.TrimSpace(m.Value)) == "true" {
					return refuse(p, "continue_final_message with add_generation_prompt", "chat_template_kwargs continue_final_message=true meets add_generation_prompt=True")
				}
			case "documents":
				req.Documents = m.Value
			default:
				kw[m.Key] = m.Value
			}
		}
		if len(kw) > 0 {
			req.Kwargs = kw
		}
	case Transformers:
		req.Documents = b.documents
		if b.hasKwargs {
			kw := make(map[string]any, len(b.kwargs))
			for _, m := range b.kwargs {
				kw[m.Key] = m.Value
			}
			req.Kwargs = kw
		}
	}
	// AIPerf: apply(messages, tokenize=True, add_generation_prompt=True),
	// no kwargs (aiperf-behaviour.md §6.3).
	return nil
}

// preparePrompt applies the generation-prompt rule of p.
func preparePrompt(p Profile, b *body, req *Request) error {
	agp, cfm := true, false
	if b.addGenerationPrompt != nil {
		agp = *b.addGenerationPrompt
	}
	if b.continueFinalMessage != nil {
		cfm = *b.continueFinalMessage
	}
	switch p {
	case VLLM, Transformers:
		if p == VLLM && cfm && b.addGenerationPrompt != nil && agp {
			// §1.7: check_generation_prompt (chat_completion/protocol.py
			// @002032ee).
			return refuse(p, "add_generation_prompt and continue_final_message both true", "Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
		}
		if cfm && agp {
			// add_generation_prompt defaults to true, and transformers
			// refuses the pair (tokenization_utils_base.py @598a3dc3).
			return refuse(p, "continue_final_message needs add_generation_prompt false", "continue_final_message and add_generation_prompt are not compatible")
		}
		req.AddGenerationPrompt, req.ContinueFinalMessage = agp, cfm
	case SGLang:
		// §5: add_generation_prompt=True is hard-coded; a final assistant
		// message with string content is continued (cfm) or becomes a
		// user message (_handle_last_assistant_message, serving_chat.py
		// @002897c2).
		req.AddGenerationPrompt = true
		n := len(req.Messages)
		if n == 0 {
			return nil
		}
		last := req.Messages[n-1]
		role, _ := last[index(last, "role")].Value.(string)
		ci := index(last, "content")
		if role != "assistant" || ci < 0 {
			return nil
		}
		content, ok := last[ci].Value.(string)
		if !ok {
			return nil
		}
		if cfm {
			req.Messages = req.Messages[:n-1]
			req.Suffix = content
		} else {
			req.Messages[n-1] = chat.Object{{Key: "role", Value: "user"}, {Key: "content", Value: content}}
		}
	case AIPerf:
		req.AddGenerationPrompt = true
	}
	return nil
}

// Renderer renders chat templates (*chat.Template).
type Renderer interface {
	Append(dst []byte, in chat.RenderInput) ([]byte, error)
}

// Append renders r through t (now pins strftime_now) and appends the
// prompt the server encodes to dst.
func (r *Request) Append(t Renderer, now time.Time, dst []byte) ([]byte, error) {
	in := r.Input()
	in.Now = now
	out, err := t.Append(dst, in)
	if err != nil && r.FlatTools != nil {
		in.Tools = r.FlatTools
		out, err = t.Append(dst, in)
	}
	if err != nil {
		return dst, err
	}
	return append(out, r.Suffix...), nil
}

// Counter counts tokens (*tokenizer.Tokenizer).
type Counter interface {
	CountBytes([]byte) int
	Count(string) int
	NumSpecialTokensToAdd(pair bool) int
}

// Count is the server's prompt_tokens for the prompt Append rendered.
func (r *Request) Count(tok Counter, prompt []byte) int {
	pr := Prompt{Text: prompt, AddSpecialTokens: r.AddSpecialTokens, Bare: r.BareTexts}
	return pr.Count(tok)
}

// CountBody prepares, renders and counts one body under rules: the
// server's prompt_tokens.
func CountBody(rules Rules, ex *extract.Inputs, t *chat.Template, tok Counter, now time.Time) (int, error) {
	return countRules(rules, ex, t, tok, now, false)
}
