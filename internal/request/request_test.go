package request

import (
	stdjson "encoding/json"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
)

// FuzzAppendString: AppendString writes what json.Marshal (goccy, the
// bodies' encoder before it) writes for every string, and what
// encoding/json does.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\b\f\n\r\t\x00\x01\x1f\x7f", `<a href="x">&amp;</a>`, "\u2028\u2029", "a\xffb\xed\xa0\x80", "é\"\\/ 😀", "\xf0\x9f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x"), s)
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1:]) != string(want) {
			t.Fatalf("AppendString(%q) = %s, goccy json.Marshal %s", s, got[1:], want)
		}
		std, _ := stdjson.Marshal(s)
		if string(got[1:]) != string(std) {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got[1:], std)
		}
	})
}

// TestAppendMessages: messages are written as json.Marshal writes the
// same messages as maps (keys sorted), which is how send wrote them
// before they were typed: plain ones, and ones with parts, null content,
// a name, tool calls, a tool call id and reasoning.
func TestAppendMessages(t *testing.T) {
	calls := json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`)
	msgs := []Message{{Role: "system", Content: "<sys>"}, {Role: "user", Content: "[rid:1]\n\nhi & \"bye\""},
		{Role: "assistant", Content: "é\u2028"}, {Role: "user", Content: "\x01\xff"},
		{Role: "user", Parts: []Part{{Text: "part a"}, {Text: "part b"}}, Name: "bob"},
		{Role: "assistant", Null: true, ToolCalls: calls, Reasoning: "think"},
		{Role: "tool", Content: "42", ToolCallID: "c1"}, {Role: "user", Parts: []Part{}}}
	maps := []map[string]any{{"role": "system", "content": "<sys>"}, {"role": "user", "content": "[rid:1]\n\nhi & \"bye\""},
		{"role": "assistant", "content": "é\u2028"}, {"role": "user", "content": "\x01\xff"},
		{"role": "user", "content": []map[string]any{{"type": "text", "text": "part a"}, {"type": "text", "text": "part b"}}, "name": "bob"},
		{"role": "assistant", "content": nil, "tool_calls": calls, "reasoning_content": "think"},
		{"role": "tool", "content": "42", "tool_call_id": "c1"}, {"role": "user", "content": []any{}}}
	got := AppendMessages(nil, msgs)
	want, _ := json.Marshal(maps)
	if string(got) != string(want) {
		t.Fatalf("AppendMessages =\n%s\njson.Marshal\n%s", got, want)
	}
	if m, _ := json.Marshal(msgs); string(m) != string(want) {
		t.Fatalf("json.Marshal of the messages = %s", m)
	}
}

// TestBody: each endpoint's members, as send writes them between the model
// and its own fields.
func TestBody(t *testing.T) {
	msgs := []Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}
	no := false
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Messages: msgs, Tools: json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)},
			`{ "messages":[{"content":"S","role":"system"},{"content":"U","role":"user"}],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{Request{Messages: msgs[1:], Kwargs: json.RawMessage(`{"enable_thinking":false}`), AddGenerationPrompt: &no, ContinueFinalMessage: true},
			`{ "messages":[{"content":"U","role":"user"}],"chat_template_kwargs":{"enable_thinking":false},"add_generation_prompt":false,"continue_final_message":true}`},
		{Request{Endpoint: endpoint.Responses, Messages: msgs},
			`{ "instructions":"S","input":[{"type":"message","role":"user","content":"U"}]}`},
		{Request{Endpoint: endpoint.Completions, Messages: msgs[1:]}, `{ "prompt":"U"}`},
		// Images: OpenAI's image_url part (chat) and input_image (Responses).
		{Request{Messages: []Message{{Role: "user", Parts: []Part{{ImageURL: "data:image/png;base64,AA=="}, {Text: "U"}}}}},
			`{ "messages":[{"content":[{"image_url":{"url":"data:image/png;base64,AA=="},"type":"image_url"},{"text":"U","type":"text"}],"role":"user"}]}`},
		{Request{Endpoint: endpoint.Responses, Messages: []Message{msgs[0], {Role: "user", Parts: []Part{{ImageURL: "data:image/png;base64,AA=="}, {Text: "U"}}}}},
			`{ "instructions":"S","input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_text","text":"U"}]}]}`},
	} {
		got, err := c.req.Body()
		if err != nil || string(got) != c.want {
			t.Errorf("Body = %s, %v; want %s", got, err, c.want)
		}
	}
	for _, bad := range []Request{{Endpoint: endpoint.Completions, Messages: msgs}, {Endpoint: endpoint.Responses, Messages: []Message{{Role: "user", Null: true}}}} {
		if _, err := bad.Body(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
