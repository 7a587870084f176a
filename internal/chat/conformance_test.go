package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/testutil"
)

// renderCase is one line of golden/templates.jsonl (which names its
// template) or of testdata/extra.jsonl (which carries its source), as
// oracle/render_ref.py rendered it; context values stay raw so that object
// keys keep their order.
type renderCase struct {
	ID       string                     `json:"id"`
	Template string                     `json:"template"`
	Source   string                     `json:"source"`
	Now      string                     `json:"now"`
	Context  map[string]json.RawMessage `json:"context"`
	Rendered *string                    `json:"rendered"`
	Error    *string                    `json:"error"`
}

// inputFromContext splits a golden render context into apply_chat_template
// arguments and kwargs (special tokens and extras, merged like transformers).
func inputFromContext(t *testing.T, ctx map[string]json.RawMessage, now string) RenderInput {
	t.Helper()
	in := RenderInput{Kwargs: map[string]any{}}
	for k, raw := range ctx {
		switch k {
		case "messages":
			msgs, err := DecodeJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			in.Messages = msgs
		case "tools":
			if string(raw) != "null" {
				in.Tools = raw
			}
		case "documents":
			if string(raw) != "null" {
				in.Documents = raw
			}
		case "add_generation_prompt":
			if err := json.Unmarshal(raw, &in.AddGenerationPrompt); err != nil {
				t.Fatal(err)
			}
		default:
			in.Kwargs[k] = raw
		}
	}
	if now != "" {
		n, err := ParseNow(now)
		if err != nil {
			t.Fatal(err)
		}
		in.Now = n
	}
	return in
}

// knownTemplateFailures lists golden cases we do not match yet, with the
// cause. The test fails when a listed case passes (remove it) or when an
// unlisted case fails.
var knownTemplateFailures = map[string]string{}

func TestGoldenTemplates(t *testing.T) {
	shared := testutil.RefDir(t)
	cases := testutil.ReadJSONL[renderCase](t, filepath.Join(shared, "golden", "templates.jsonl"))
	compiled := map[string]*Template{}
	compileErr := map[string]error{}
	pass, templatesOK := 0, map[string]bool{}
	for _, c := range cases {
		if _, ok := templatesOK[c.Template]; !ok {
			templatesOK[c.Template] = true
		}
		tmpl, seen := compiled[c.Template]
		if !seen && compileErr[c.Template] == nil {
			src, err := os.ReadFile(filepath.Join(shared, "templates", c.Template+".jinja"))
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err = Compile(string(src))
			compiled[c.Template], compileErr[c.Template] = tmpl, err
		}
		var got string
		err := compileErr[c.Template]
		if err == nil {
			got, err = tmpl.Render(inputFromContext(t, c.Context, c.Now))
		}
		var problem string
		switch {
		case c.Error != nil && err == nil:
			problem = "rendered, want error " + *c.Error
		case c.Error == nil && err != nil:
			problem = "error " + err.Error()
		case c.Rendered != nil && got != *c.Rendered:
			problem = "mismatch " + firstDiff(got, *c.Rendered)
		}
		cause, known := knownTemplateFailures[c.ID]
		switch {
		case problem == "":
			pass++
			if known {
				t.Errorf("%s: listed as a known failure (%s) but passes now; remove it", c.ID, cause)
			}
		default:
			templatesOK[c.Template] = false
			if !known {
				t.Errorf("%s: %s", c.ID, problem)
			}
		}
	}
	nt := 0
	for _, ok := range templatesOK {
		if ok {
			nt++
		}
	}
	t.Logf("golden templates: %d/%d cases, %d/%d templates fully identical", pass, len(cases), nt, len(templatesOK))
}

func TestGoldenWire(t *testing.T) {
	shared := testutil.RefDir(t)
	models, err := filepath.Glob(filepath.Join(shared, "golden", "wire", "*.jsonl"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no wire golden files: %v", err)
	}
	total, pass, typedCases := 0, 0, 0
	for _, path := range models {
		model := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		tmpl, err := LoadFS(os.DirFS(filepath.Join(shared, "models", model)), "")
		if err != nil {
			t.Errorf("%s: %v", model, err)
			continue
		}
		for _, c := range testutil.ReadJSONL[testutil.WireCase](t, path) {
			total++
			msgs, err := DecodeJSON(c.Messages)
			if err != nil {
				t.Fatal(err)
			}
			in := RenderInput{Messages: msgs, AddGenerationPrompt: c.Generation(), FlattenContent: true, Now: testutil.WireNow}
			if c.HasTools() {
				in.Tools = c.Tools
			}
			got, err := tmpl.Render(in)
			if err != nil {
				t.Errorf("%s/%s: %v", model, c.Case, err)
				continue
			}
			if got != c.Text {
				t.Errorf("%s/%s: %s", model, c.Case, firstDiff(got, c.Text))
				continue
			}
			// Append must add the same text after what the buffer holds.
			if out, err := tmpl.Append([]byte("prefix"), in); err != nil || string(out) != "prefix"+c.Text {
				t.Errorf("%s/%s: Append: %v %s", model, c.Case, err, firstDiff(string(out), "prefix"+c.Text))
			}
			// Typed messages must render as the JSON ones they stand for.
			if typed, ok := typedMessages(t, c.Messages); ok {
				in.Messages = MessagesValue(typed)
				if got, err := tmpl.Render(in); err != nil || got != c.Text {
					t.Errorf("%s/%s: []Message: %v %s", model, c.Case, err, firstDiff(got, c.Text))
				}
				typedCases++
			}
			pass++
		}
	}
	t.Logf("golden wire: %d/%d cases over %d models (%d also as []Message)", pass, total, len(models), typedCases)
	if typedCases == 0 {
		t.Error("no case exercised []Message")
	}
}

// firstDiff describes where got and want first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-40)
	return "at byte " + itoa(i) + ": got " + quote(got[lo:min(len(got), i+40)]) + " want " + quote(want[lo:min(len(want), i+40)])
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// typedMessages converts messages to []Message when each one has exactly
// the keys role, content (a string) and optionally tool_calls, in that
// order, as Message renders them.
func typedMessages(t *testing.T, raw json.RawMessage) ([]Message, bool) {
	t.Helper()
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	out := make([]Message, 0, len(elems))
	for _, e := range elems {
		obj, err := jsonobj.Parse(e)
		if err != nil || len(obj) < 2 || len(obj) > 3 || obj[0].Key != "role" || obj[1].Key != "content" {
			return nil, false
		}
		var m Message
		if json.Unmarshal(obj[0].Value, &m.Role) != nil || json.Unmarshal(obj[1].Value, &m.Content) != nil || !strings.HasPrefix(string(obj[1].Value), `"`) {
			return nil, false
		}
		if len(obj) == 3 {
			if obj[2].Key != "tool_calls" || string(obj[2].Value) == "null" {
				return nil, false
			}
			m.ToolCalls = obj[2].Value
		}
		out = append(out, m)
	}
	return out, true
}
