package serverprofile

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/modelsrc"
)

// TestResponsesAsChat: what each profile's template sees for a Responses
// body (responses/utils.py @01ca842d construct_input_messages and
// _construct_message_from_response_item; §3), dumped as transformers'
// tojson writes it.
func TestResponsesAsChat(t *testing.T) {
	tools := `"tools":[{"type":"function","name":"look","parameters":{"type":"object"}},{"type":"web_search"}]`
	items := `{"model":"m","instructions":"Sys",` + tools + `,"reasoning":{"effort":"low"},"input":[
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},
	  {"type":"reasoning","id":"r","summary":[{"type":"summary_text","text":"sum"}]},
	  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"first"},{"type":"output_text","text":"second"}]},
	  {"type":"function_call","call_id":"c1","name":"look","arguments":"{\"q\":1}"},
	  {"type":"function_call_output","call_id":"c1","output":"42"},
	  {"role":"user","content":"again"}]}`
	cases := []struct {
		rule string
		p    Profile
		body string
		want []string // lines (or parts of lines) of the dump
	}{
		{"§3 string input, instructions as a system message", VLLM, `{"model":"m","instructions":"Sys","input":"Hi"}`,
			[]string{`[{"role": "system", "content": "Sys"}, {"role": "user", "content": "Hi"}]`, "agp=True"}},
		{"§3 empty instructions are no system message", VLLM, `{"model":"m","instructions":"","input":"Hi"}`,
			[]string{`[{"role": "user", "content": "Hi"}]`}},
		{"§3 items: reasoning then the assistant's first text part merged, the function call merged into it, its output a tool message; tools converted; reasoning effort", VLLM, items,
			[]string{`{"role": "system", "content": "Sys"}, {"role": "user", "content": "a\nb"}, ` +
				`{"role": "assistant", "content": "first", "tool_calls": [{"id": "c1", "function": {"name": "look", "arguments": {"q": 1}}, "type": "function"}], "reasoning": "sum", "reasoning_content": "sum"}, ` +
				`{"role": "tool", "content": "42", "tool_call_id": "c1"}, {"role": "user", "content": "again"}]`,
				`tools=[{"type": "function", "function": {"name": "look", "description": null, "parameters": {"type": "object"}}}]`,
				"reasoning_effort=low", "enable_thinking=True"}},
		{"SGLang: the same messages, no tools, no reasoning effort, text parts joined by a space", SGLang, items,
			[]string{`{"role": "user", "content": "a b"}`, "tools=null"}},
		{"transformers: the messages as converted (other keys kept), text parts joined by \"\", tools converted", Transformers, items,
			[]string{`{"type": "message", "role": "user", "content": "ab"}`, `"reasoning": "sum", "content": "first"`, `tools=[{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}]`}},
		{"AIPerf: its own view (instructions, every item with a role, parts joined by \"\"), tools not rendered", AIPerf, items,
			[]string{`[{"role": "system", "content": "Sys"}, {"role": "user", "content": "ab"}, {"role": "assistant", "content": "firstsecond"}, {"role": "user", "content": "again"}]`, "tools=null"}},
		{"should_continue_final_message: an incomplete last message is continued", VLLM,
			`{"model":"m","input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"par"}]}]}`,
			// continue_final_message cuts the render right after the text.
			[]string{`[{"role": "user", "content": "q"}, {"role": "assistant", "content": "par`}},
	}
	tmpl := compile(t, dumpSrc)
	for _, c := range cases {
		_, out, err := prep(t, c.p, tmpl, c.body)
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		if strings.Contains(c.rule, "continued") && !strings.HasSuffix(out, `"content": "par`) {
			t.Errorf("%s: the render is not cut after the final message: %s", c.rule, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s (%s):\n got %s\nwant %s", c.rule, c.p, out, w)
			}
		}
	}
	// vLLM raises "Encrypted content is not supported." for an encrypted
	// reasoning item.
	if _, _, err := prep(t, VLLM, tmpl, `{"model":"m","input":[{"type":"reasoning","encrypted_content":"x","summary":[]}]}`); !IsRefusal(err) {
		t.Errorf("encrypted reasoning: %v, want a refusal", err)
	}
	// Responses bodies are encoded with special tokens by vLLM only.
	for p, want := range map[Profile]bool{VLLM: true, SGLang: false, Transformers: false, AIPerf: false} {
		req, _, err := prep(t, p, tmpl, `{"model":"m","input":"Hi"}`)
		if err != nil || req.AddSpecialTokens != want {
			t.Errorf("%s: add_special_tokens %v (%v), want %v", p, req != nil && req.AddSpecialTokens, err, want)
		}
	}
}

// TestCountCompletions: §2 for vLLM (special tokens per text prompt,
// add_special_tokens honoured, token ids as given, lists summed), the
// same for SGLang and transformers, AIPerf's bare count, and Templated.
func TestCountCompletions(t *testing.T) {
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	// A counter that adds one special token, as a BOS-adding
	// post-processor does, over the default model's encoding.
	bos := bosCounter{tok}
	a, b := "Call me Ishmael.", "Some years ago"
	na, nb, joined := tok.Count(a), tok.Count(b), tok.Count(a+" "+b)
	for _, c := range []struct {
		p    Profile
		body string
		want int
	}{
		{VLLM, `{"prompt":"` + a + `"}`, na + 1},
		{VLLM, `{"prompt":["` + a + `","` + b + `"]}`, na + nb + 2},
		{VLLM, `{"prompt":["` + a + `","` + b + `"],"add_special_tokens":false}`, na + nb},
		{VLLM, `{"prompt":[[1,2,3],[4]]}`, 4},
		{VLLM, `{"prompt":[5,6]}`, 2},
		{SGLang, `{"prompt":["` + a + `","` + b + `"],"add_special_tokens":false}`, na + nb + 2},
		{Transformers, `{"prompt":"` + a + `"}`, na + 1},
		{AIPerf, `{"prompt":["` + a + `","` + b + `"]}`, joined},
		{AIPerf, `{"prompt":[[1,2,3],[4]]}`, 4},
	} {
		ex, err := extract.Body([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if Templated(c.p, ex) {
			t.Errorf("%s %s: a completions body is templated", c.p, c.body)
		}
		got, err := CountCompletions(c.p, ex, bos)
		if err != nil || got != c.want {
			t.Errorf("%s %s: %d (%v), want %d", c.p, c.body, got, err, c.want)
		}
		if n, err := CountRequest(c.p, ex, nil, bos, time.Time{}); err != nil || n != c.want {
			t.Errorf("%s %s: CountRequest %d (%v), want %d", c.p, c.body, n, err, c.want)
		}
	}
	ex, _ := extract.Body([]byte(`{"model":"m","instructions":"Sys","input":"Hi"}`))
	if Templated(AIPerf, ex) || !Templated(VLLM, ex) {
		t.Error("a Responses string input: AIPerf counts it bare, vLLM templates it")
	}
	if n, err := CountRequest(AIPerf, ex, nil, tok, time.Time{}); err != nil || n != tok.Count("Sys Hi") {
		t.Errorf("AIPerf, Responses string input: %d (%v), want %d", n, err, tok.Count("Sys Hi"))
	}
}

type bosCounter struct{ Counter }

func (bosCounter) NumSpecialTokensToAdd(bool) int { return 1 }

// FuzzEndpoints feeds completions and Responses bodies to every profile
// and every two-profile mix (what Explain builds): no panic, and a body
// is refused, fails to render, or counts to a non-negative number.
func FuzzEndpoints(f *testing.F) {
	for _, s := range []string{
		`{"prompt":["a","b"],"add_special_tokens":false}`,
		`{"prompt":[[1,2],[3]]}`,
		`{"instructions":"s","input":"hi","tools":[{"type":"function","name":"f"}]}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{"},{"type":"function_call","name":"g"},{"type":"function_call_output","output":"o"}]}`,
		`{"input":[{"type":"reasoning","content":[{"text":"r"}]},{"role":"assistant","content":[]},{"type":"reasoning","summary":["s"]},{"role":"assistant","content":"x","status":"in_progress"}]}`,
	} {
		f.Add([]byte(s))
	}
	src, err := modelsrc.Default()
	if err != nil {
		f.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		f.Fatal(err)
	}
	tmpl := compile(f, dumpSrc)
	profiles := []Profile{VLLM, SGLang, Transformers, AIPerf}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := extract.Body(body)
		if err != nil || ex.Endpoint == endpoint.Chat {
			return
		}
		for i, p := range profiles {
			if n, err := CountRequest(p, ex, tmpl, tok, time.Time{}); err == nil && n < 0 {
				t.Fatalf("%s: negative count", p)
			}
			if _, err := PromptIDs(p, ex, tmpl, tok, time.Time{}); err != nil && ex.Endpoint == endpoint.Completions {
				t.Fatalf("%s: completions ids: %v", p, err)
			}
			r := RulesOf(p)
			q := profiles[(i+1)%len(profiles)]
			for a := Axis(0); a < numAxes; a += 2 {
				r[a] = q
			}
			if ex.Endpoint == endpoint.Responses {
				if req, err := Prepare(r, ex, tmpl); err == nil {
					if text, err := req.Append(tmpl, time.Time{}, nil); err == nil && req.Count(tok, text) < 0 {
						t.Fatal("negative count")
					}
				}
			}
		}
	})
}
