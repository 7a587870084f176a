package chat

import (
	"encoding/json"
	"errors"
	"testing"
	"testing/fstest"
	"time"
)

// fuzzLimits are small bounds, so that a fuzzed template that loops or
// grows ends fast; the point is that it ends, with an error.
var fuzzLimits = Limits{MaxSteps: 20_000, MaxDepth: 32, MaxOutput: 64 << 10, MaxAlloc: 1 << 20, MaxTime: time.Second}

var fuzzMessages = json.RawMessage(`[{"role":"system","content":"S"},{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"a":1}}}]},{"role":"user","content":[{"type":"text","text":"x"}]}]`)

var templateSeeds = []string{
	`{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}`,
	`{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}[INST] {{ m.content | trim }} [/INST]{% endfor %}`,
	`{% set ns = namespace(n=0) %}{% for m in messages|reverse %}{% set ns.n = ns.n + 1 %}{{ ns.n }}{{ m['role']|upper }}{% endfor %}{{ strftime_now('%Y-%m-%d') }}`,
	`{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}`,
	`{% for i in range(1000000) %}{{ 'x' * 1000 }}{% endfor %}`,
	`{{ messages | tojson }}{{ tools }}{% if tools is not none %}{% for t in tools %}{{ t.function.name }}{% endfor %}{% endif %}`,
	`{%- for message in messages -%}{{- message.content if message.content is string else message.content[0].text -}}{%- endfor -%}`,
	`{{ "a" ~ 1 ~ none }}{{ [1,2,3] | join(",") }}{{ {"k": "v"} | items | list }}{{ "%s-%d" | format("a", 3) }}`,
	``, `{{`, `{% if %}`, `{% endfor %}`,
}

// renderFuzzed renders t with a fixed conversation; a template error is a
// valid answer, and so is hitting a bound, but the output must respect
// the bounds and a bound must be reported as ErrLimit.
func renderFuzzed(t *testing.T, tmpl *Template) {
	t.Helper()
	msgs, err := DecodeJSON(fuzzMessages)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Render(RenderInput{Messages: msgs, AddGenerationPrompt: true,
		Tools: json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{}}}]`), Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	if err == nil && len(out) > fuzzLimits.MaxOutput {
		t.Fatalf("output of %d bytes, above MaxOutput %d", len(out), fuzzLimits.MaxOutput)
	}
	var raise *RaiseError
	_ = errors.As(err, &raise)
}

// FuzzTemplate compiles and renders chat templates, which come from model
// repos anyone can publish, under bounded limits: no panic, no hang, no
// output past the bounds.
func FuzzTemplate(f *testing.F) {
	for _, s := range templateSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Compile(src, WithLimits(fuzzLimits), WithSpecialTokens(map[string]any{"bos_token": "<s>", "eos_token": "</s>"}))
		if err != nil {
			return
		}
		renderFuzzed(t, tmpl)
	})
}

// FuzzLoadFS loads a model folder's template files as LoadFS finds them
// (tokenizer_config.json with its chat_template string or list and special
// tokens, chat_template.jinja): any bytes are refused or give a template
// that renders within the bounds.
func FuzzLoadFS(f *testing.F) {
	f.Add([]byte(`{"bos_token":"<s>","eos_token":{"content":"</s>"},"chat_template":"{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"}`), "")
	f.Add([]byte(`{"chat_template":[{"name":"default","template":"{{ messages[0].content }}"},{"name":"tool_use","template":"{{ tools }}"}],"additional_special_tokens":["<a>",{"content":"<b>"}]}`), "")
	f.Add([]byte(`{"chat_template":null}`), templateSeeds[0])
	f.Add([]byte(`{"chat_template":""}`), "")
	f.Add([]byte(`{"chat_template": 5}`), "")
	f.Add([]byte(`{garbled`), "")
	f.Fuzz(func(t *testing.T, config []byte, jinjaFile string) {
		fsys := fstest.MapFS{"tokenizer_config.json": {Data: config}}
		if jinjaFile != "" {
			fsys["chat_template.jinja"] = &fstest.MapFile{Data: []byte(jinjaFile)}
		}
		tmpl, err := LoadFS(fsys, "", WithLimits(fuzzLimits))
		if err != nil {
			return
		}
		renderFuzzed(t, tmpl)
		SpecialTokensFS(fsys)
		FindTemplate(fsys, "")
	})
}
