package serverprofile

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/extract"
)

// FuzzHarmony feeds chat bodies (tool schemas above all: the TypeScript
// rendering walks them) to the Harmony renderer: no panic, and the
// rendered text is bounded by the body's size (no schema blows up).
func FuzzHarmony(f *testing.F) {
	for _, b := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"system","content":[{"type":"text","text":"a"},"b"]},{"role":"assistant","content":null,"reasoning":"r","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"x"}],"reasoning_effort":"high"}`,
		`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","description":"d\nd","parameters":{"type":"object","properties":{"a":{"oneOf":[{"type":"string","description":"x"},{"type":"array","items":{"type":"object","properties":{"b":{"type":["integer","null"],"default":1.5e300}}}}],"description":"x","default":"y"},"c":{"type":"string","enum":["p","q"],"default":"p","title":"T","examples":["e"]}},"required":["a"]}}}]}`,
		`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"oneOf":[{"nullable":true,"type":"number","default":{"k":[1,"\u0001"]}}]}}}]}`,
		// Responses bodies (renderHarmonyResponses).
		`{"input":"hi","instructions":"i","tools":[{"type":"function","name":"f","parameters":{"type":"object"}},{"type":"web_search_preview"}],"reasoning":{"effort":"high"}}`,
		`{"input":[{"role":"system","content":[{"type":"input_text","text":"s"}]},{"type":"reasoning","id":"r","summary":[],"content":[{"text":"a"},{"text":"b"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}]}`,
		`{"input":"","previous_input_messages":[{"author":{"role":"tool","name":"functions.f"},"channel":"commentary","recipient":"assistant","content":"w"},{"role":"assistant","tool_calls":[{"function":{"name":"f"}}]},{"role":"tool","name":"f","content":[{"text":"t"}]}]}`,
	} {
		f.Add([]byte(b))
	}
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := extract.Body(body)
		if err != nil || ex.Body == nil {
			return
		}
		pr, err := renderHarmony(ex, now, false, nil)
		if err != nil {
			return
		}
		// Each schema node renders a bounded text of its own plus its
		// strings, so the text stays within a constant times the body
		// (a oneOf repeats the indent of its depth: depth is bounded).
		if limit := 4096 + 64*harmonyMaxDepth*len(body); len(pr.Text) > limit {
			t.Fatalf("%d bytes rendered from a %d-byte body", len(pr.Text), len(body))
		}
		for _, c := range pr.Cuts {
			if c < 0 || c > len(pr.Text) {
				t.Fatalf("cut %d outside the %d-byte text", c, len(pr.Text))
			}
		}
	})
}

// TestHarmonyUnpinnedDate: without --now the start date is today's, as
// vLLM's datetime.now() (not the zero time's year 1).
func TestHarmonyUnpinnedDate(t *testing.T) {
	ex, err := extract.Body([]byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Format("2006-01-02")
	pr, err := renderHarmony(ex, time.Time{}, false, nil)
	after := time.Now().Format("2006-01-02")
	if err != nil || !(strings.Contains(string(pr.Text), "Current date: "+before) || strings.Contains(string(pr.Text), "Current date: "+after)) {
		t.Errorf("%v: %q", err, pr.Text)
	}
}

// TestHarmonyHostileSchema: a parameters schema nested past the bound is
// an error naming the tool's field, not a deep recursion.
func TestHarmonyHostileSchema(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 200) + `{}` + strings.Repeat(`}`, 200)
	body := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":` + deep + `}}}}]}`
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	_, err = renderHarmony(ex, time.Now(), false, nil)
	if err == nil || !strings.Contains(err.Error(), "tools[0].function.parameters") || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep schema: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"messages":[{"role":"user","content":"hi"}],"reasoning_effort":"none"}`, "reasoning_effort"},
		{`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search"}]}`, "tools[0]"},
		{`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}]}`, "tools[0].function.parameters"},
		{`{"messages":[{"role":"function","content":"hi"}]}`, "messages[0]"},
		{`{"input":"hi","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"input":"hi","tool_choice":{"type":"function","name":"f"}}`, "tool_choice"},
		{`{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"o"}]}]}`, "input[1]"},
		{`{"input":[{"type":"item_reference","id":"x"}]}`, "input[0]"},
		{`{"input":"hi","tools":[{"type":"function","name":"f"},{"type":"mcp","server_label":"m"}]}`, "mcp"},
	} {
		ex, err := extract.Body([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := renderHarmony(ex, time.Now(), false, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.body, err, c.want)
		}
	}
}
