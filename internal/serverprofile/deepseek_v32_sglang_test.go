package serverprofile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/extract"
)

// dsv32SGLangNotReproduced are corpus bodies SGLang renders that islkit
// refuses by name: continue_final_message appends the final assistant
// message's own encoding after the prompt's ids.
var dsv32SGLangNotReproduced = map[string]bool{"continue-final": true}

// readDSV32SGLangExpect reads testdata/deepseek-v32-sglang-expect.jsonl.gz,
// written by scripts/renderers/deepseek-v32-sglang-ref.py through SGLang
// 0.5.23's own OpenAIServingChat._apply_jinja_template (chat encoding
// spec dsv32) and the tokenizer its get_tokenizer loads.
func readDSV32SGLangExpect(t *testing.T) []dsv32Expect {
	return readExpect[dsv32Expect](t, "deepseek-v32-sglang-expect.jsonl.gz")
}

// TestDeepSeekV32SGLangMatchesServer: under --server sglang a deepseek_v32
// model's count and token ids equal SGLang's on every corpus body (its
// BOS added by the tokenizer before the encoder's, text parts joined
// with " ", reasoning_content only, "thinking" only, a final assistant
// message made the user's, the tools on the request's system message,
// Function.model_dump's keys); a body SGLang answers with an error is
// refused.
func TestDeepSeekV32SGLangMatchesServer(t *testing.T) {
	cases := readDSV32SGLangExpect(t)
	rendered := 0
	for _, c := range cases {
		if c.Error == "" {
			rendered++
		}
	}
	if rendered < 100 {
		t.Fatalf("%d rendered bodies in the corpus, want at least 100", rendered)
	}
	m, tmpl := dsv32Model(t)
	for _, c := range cases {
		ex, err := extract.Body(c.Body)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pr, err := Render(SGLang, ex, tmpl, time.Time{}, nil)
		if c.Error != "" || dsv32SGLangNotReproduced[c.Name] {
			if !IsRefusal(err) {
				t.Errorf("%s: %v, want a refusal (SGLang: %s)", c.Name, err, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if n := pr.Count(m.tok); n != c.Count {
			t.Errorf("%s: count %d, SGLang %d\n go:  %q\n ref: %q", c.Name, n, c.Count, pr.Text, c.Text)
		}
		if ids := pr.IDs(m.tok); !slices.Equal(ids, c.IDs) {
			t.Errorf("%s: ids differ\n go:  %v\n ref: %v", c.Name, ids, c.IDs)
		}
	}
}

// TestDeepSeekV32SGLangBadInput: what SGLang's models refuse or islkit
// does not reproduce under SGLang is refused, naming the field.
func TestDeepSeekV32SGLangBadInput(t *testing.T) {
	_, tmpl := dsv32Model(t)
	for body, want := range map[string]string{
		`{"messages":[{"role":"system","content":"s","tools":[{"function":{"name":"f"}}]},{"role":"user","content":"u"}]}`: "messages[0].tools",
		`{"messages":[{"role":"user","content":"u"}],"tools":[{"function":{"name":"f","strict":"yes"}}]}`:                  "tools[0].function.strict",
		`{"messages":[{"role":"user","content":"u"}],"tools":[{"function":{"name":"f","description":3}}]}`:                 "tools[0].function.description",
		`{"messages":[{"role":"user","content":"u"}],"tools":[{"defer_loading":true,"function":{"name":"f"}}]}`:            "tools[0].defer_loading",
		`{"messages":[{"role":"user","content":null}]}`:                                                                    "messages[0].content",
		`{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a"}],"continue_final_message":true}`:    "continue_final_message",
	} {
		ex, err := extract.Body([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Render(SGLang, ex, tmpl, time.Time{}, nil)
		if !IsRefusal(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal naming %s", body, err, want)
		}
	}
}
