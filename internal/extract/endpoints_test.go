package extract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/endpoint"
)

// The four prompt shapes of vLLM's CompletionRequest.prompt, read as
// AIPerf's _append_string_or_list reads them: strings are texts, token
// ids are counted as given.
func TestCompletionsPrompts(t *testing.T) {
	cases := []struct {
		body   string
		texts  []string
		ids    [][]int // nil entries: text prompts
		pretok int
	}{
		{`{"model":"m","prompt":"Hello"}`, []string{"Hello"}, [][]int{nil}, 0},
		{`{"model":"m","prompt":["a","b c"]}`, []string{"a", "b c"}, [][]int{nil, nil}, 0},
		{`{"model":"m","prompt":[1,2,3]}`, nil, [][]int{{1, 2, 3}}, 3},
		{`{"model":"m","prompt":[[1,2],[3],[]]}`, nil, [][]int{{1, 2}, {3}, {}}, 3},
		{`{"model":"m","prompt":[]}`, nil, nil, 0},
	}
	for _, c := range cases {
		ex, err := Body([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if ex.Endpoint != endpoint.Completions || ex.Chat != nil || !slices.Equal(ex.Texts, c.texts) || ex.Pretokenised != c.pretok || len(ex.Prompts) != len(c.ids) {
			t.Errorf("%s: endpoint %q chat %v texts %q pretokenised %d prompts %+v", c.body, ex.Endpoint, ex.Chat, ex.Texts, ex.Pretokenised, ex.Prompts)
			continue
		}
		for i, p := range ex.Prompts {
			if (c.ids[i] != nil) != p.Tokens || !slices.Equal(p.IDs, c.ids[i]) {
				t.Errorf("%s: prompt %d = %+v", c.body, i, p)
			}
		}
	}
	for body, want := range map[string]string{
		`{"prompt":5}`:           "must be a string",
		`{"prompt":["a",1]}`:     `"prompt"[1] is not a string`,
		`{"prompt":[1,"a"]}`:     "not a token id",
		`{"prompt":[[1],["a"]]}`: `"prompt"[1]`,
		`{"prompt":[1.5]}`:       "not a token id",
	} {
		if _, err := Body([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Body(%s) = %v, want an error mentioning %q", body, err, want)
		}
	}
}

// A Responses body as AIPerf's ResponsesEndpoint reads it: instructions
// first (text and system message), items with a role in the chat view
// with their input_text/output_text parts joined by "", function calls
// and their outputs as tool texts, input_image as media.
func TestResponsesItems(t *testing.T) {
	body := `{"model":"m","instructions":"Be brief.","input":[
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"},{"type":"input_image","image_url":"x"},{"type":"input_text","text":" there"}]},
	  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]},
	  {"type":"function_call","call_id":"c1","name":"look","arguments":"{\"q\":1}"},
	  {"type":"function_call_output","call_id":"c1","output":"42"},
	  {"role":"user","content":"Thanks"}],
	 "tools":[{"type":"function","name":"look","description":"Look it up","parameters":{"type":"object"}}]}`
	ex, err := Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantTexts := []string{"Be brief.", "Hi", " there", "Hello.", "look", `{"q":1}`, "42", "Thanks", "look", "Look it up", `{"type":"object"}`}
	if !slices.Equal(ex.Texts, wantTexts) {
		t.Errorf("Texts = %q\nwant %q", ex.Texts, wantTexts)
	}
	wantTools := []string{"look", `{"q":1}`, "42", "look", "Look it up", `{"type":"object"}`}
	if !slices.Equal(ex.ToolTexts, wantTools) {
		t.Errorf("ToolTexts = %q\nwant %q", ex.ToolTexts, wantTools)
	}
	var roles []string
	for _, m := range ex.Chat {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"system", "user", "assistant", "user"}) || !slices.Equal(ex.Contents(), []string{"Be brief.", "Hi there", "Hello.", "Thanks"}) {
		t.Errorf("chat view roles %q contents %q", roles, ex.Contents())
	}
	if c, _ := ex.Chat[0].Fields.Get("content"); string(c) != `"Be brief."` {
		t.Errorf("instructions message content member %s", c)
	}
	if ex.Endpoint != endpoint.Responses || len(ex.Items) != 5 || ex.Items[2].Type != "function_call" || ex.Media.Images != 1 || !ex.MultiTextParts || !ex.HasInstructions || ex.NumMessages != 4 {
		t.Errorf("endpoint %q items %d media %+v multi %v", ex.Endpoint, len(ex.Items), ex.Media, ex.MultiTextParts)
	}

	ex, err = Body([]byte(`{"model":"m","input":"Just text"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !ex.StringInput || ex.InputText != "Just text" || ex.HasInstructions || len(ex.Chat) != 1 || ex.Chat[0].Role != "user" || !slices.Equal(ex.Texts, []string{"Just text"}) {
		t.Errorf("string input: %+v", ex)
	}
	for body, want := range map[string]string{
		`{"input":5}`:                        "neither a string nor a list",
		`{"input":[1]}`:                      "input[0] is not an object",
		`{"input":"x","instructions":["a"]}`: `"instructions" is not a string`,
	} {
		if _, err := Body([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Body(%s) = %v, want an error mentioning %q", body, err, want)
		}
	}
}

// referencePrompt reads "prompt" with encoding/json: the texts and the
// number of token ids, ok false where the shape is not one of the four.
func referencePrompt(body []byte) (texts []string, ids int, ok bool) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return nil, 0, false
	}
	raw := doc["prompt"]
	var s string
	if json.Unmarshal(raw, &s) == nil && len(raw) > 0 && raw[0] == '"' {
		return []string{s}, 0, true
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil && ss != nil {
		return ss, 0, true
	}
	var one []int
	if json.Unmarshal(raw, &one) == nil && one != nil {
		return nil, len(one), true
	}
	var many [][]int
	if json.Unmarshal(raw, &many) == nil && many != nil {
		for _, l := range many {
			ids += len(l)
		}
		return nil, ids, true
	}
	return nil, 0, false
}

// FuzzCompletions checks the prompt reader against encoding/json.
func FuzzCompletions(f *testing.F) {
	for _, s := range []string{`{"prompt":"a\u00e9"}`, `{"prompt":["a","b"]}`, `{"prompt":[1,2]}`, `{"prompt":[[1],[2,3]]}`, `{"prompt":[null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		texts, ids, ok := referencePrompt(body)
		ex, err := Body(body)
		if err != nil || ex.Endpoint != endpoint.Completions {
			return
		}
		if !ok {
			// null elements decode as "" or 0 in encoding/json; a shape
			// encoding/json refuses must not be read either.
			t.Fatalf("%q: read as %+v, which encoding/json refuses", body, ex.Prompts)
		}
		if len(texts) == 0 && len(ex.Texts) == 0 {
			texts = nil
		}
		if !slices.Equal(ex.Texts, texts) || ex.Pretokenised != ids {
			t.Fatalf("%q: texts %q ids %d, want %q %d", body, ex.Texts, ex.Pretokenised, texts, ids)
		}
	})
}

// FuzzResponses: any body read as a Responses body has one chat-view
// message per item with a string role (plus the instructions), and every
// text of the view is among its texts.
func FuzzResponses(f *testing.F) {
	for _, s := range []string{
		`{"input":"hi","instructions":"sys"}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","name":"f","arguments":"{}"}]}`,
		`{"input":[{"type":"reasoning","content":[{"type":"reasoning_text","text":"r"}]},{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"g"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := Body(body)
		if err != nil || ex.Endpoint != endpoint.Responses {
			return
		}
		want := 0
		if ex.HasInstructions {
			want++
		}
		if ex.StringInput {
			want++
		}
		for _, it := range ex.Items {
			if it.HasRole {
				want++
			}
		}
		if len(ex.Chat) != want || ex.NumMessages != want {
			t.Fatalf("%q: %d messages, want %d", body, len(ex.Chat), want)
		}
		for _, m := range ex.Chat {
			for _, p := range m.Parts {
				if !slices.Contains(ex.Texts, p) {
					t.Fatalf("%q: part %q not among the texts", body, p)
				}
			}
		}
	})
}
