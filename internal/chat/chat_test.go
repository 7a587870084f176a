package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/islkit/islkit/internal/testutil"
)

// TestExtraCases renders testdata/extra.jsonl: edge cases (newline
// normalisation, bounds, strftime, *args, generation, tojson, loop and dict
// methods, string methods) rendered by oracle/render_ref.py.
func TestExtraCases(t *testing.T) {
	for _, c := range testutil.ReadJSONL[renderCase](t, filepath.Join("testdata", "extra.jsonl")) {
		t.Run(c.ID, func(t *testing.T) {
			tmpl, err := Compile(c.Source)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(inputFromContext(t, c.Context, c.Now))
			switch {
			case c.Error != nil && err == nil:
				t.Fatalf("rendered %q, want error %s", got, *c.Error)
			case c.Error == nil && err != nil:
				t.Fatal(err)
			case c.Rendered != nil && got != *c.Rendered:
				t.Fatalf("got %q, want %q", got, *c.Rendered)
			}
		})
	}
}

// TestBounds checks that runaway templates fail fast with ErrLimit instead
// of hanging, exhausting memory or overflowing the Go stack.
func TestBounds(t *testing.T) {
	cases := map[string]string{
		"huge range":      `{% for i in range(10**9) %}x{% endfor %}`,
		"nested loops":    `{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}`,
		"deep recursion":  `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`,
		"mutual":          `{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}`,
		"caller":          `{% macro f() %}{% call f() %}x{% endcall %}{% endmacro %}{{ f() }}`,
		"recursive loop":  `{% set l = [[]] %}{% for x in l recursive %}{{ loop(l) }}{% endfor %}`,
		"string doubling": `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}`,
		"list doubling":   `{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}`,
		"output":          `{% for i in range(100000) %}{{ 'x' * 1000000 }}{% endfor %}`,
	}
	// Tighter than DefaultLimits to keep the test (and -race) quick; the
	// default bounds are exercised by extra.jsonl's huge_range and deep_macro.
	lim := Limits{MaxSteps: 500_000, MaxOutput: 8 << 20, MaxAlloc: 128 << 20}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			tmpl, err := Compile(src, WithLimits(lim))
			if err != nil {
				t.Fatal(err)
			}
			// The bounds count steps and bytes, not time, so reaching one is
			// deterministic; a runaway would show as the test binary's timeout.
			_, err = tmpl.Render(RenderInput{})
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want ErrLimit", err)
			}
		})
	}
}

func TestWallTimeLimit(t *testing.T) {
	// Each iteration is cheap, so only the clock stops this one.
	tmpl, err := Compile(`{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
		WithLimits(Limits{MaxSteps: 1 << 62, MaxTime: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	// Unbounded by steps, the loop would run for hours: only the clock can
	// have stopped it.
	if _, err := tmpl.Render(RenderInput{}); !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit", err)
	}
}

func TestRaiseException(t *testing.T) {
	tmpl, err := Compile(`{{ raise_exception('no system role') }}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render(RenderInput{})
	var re *RaiseError
	if !errors.As(err, &re) || re.Message != "no system role" {
		t.Fatalf("err = %v, want RaiseError", err)
	}
}

func TestLoadFS(t *testing.T) {
	cfg := func(ct string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
			"eos_token": "</s>", "pad_token": null, "additional_special_tokens": ["<a>", {"content": "<b>"}]` + ct + `}`)}
	}
	fsys := fstest.MapFS{
		"plain/tokenizer_config.json":  cfg(`, "chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"`),
		"none/tokenizer_config.json":   cfg(`, "chat_template": null`),
		"absent/tokenizer_config.json": cfg(``),
		"empty/tokenizer_config.json":  cfg(`, "chat_template": []`),
		"named/tokenizer_config.json": cfg(`, "chat_template": [{"name": "default", "template": "D{{ additional_special_tokens|join }}"},
			{"name": "tool_use", "template": "T{{ tools|length }}"}, {"name": "rag", "template": "R"}]`),
		"file/tokenizer_config.json": cfg(`, "chat_template": "config"`),
		"file/chat_template.jinja":   {Data: []byte("file {{ bos_token }}\n")},
	}
	sub := func(dir string) fstestSub { return fstestSub{fsys, dir} }
	msgs := MessagesValue([]Message{{Role: "user", Content: "hi"}})

	for _, dir := range []string{"none", "absent", "empty"} {
		if _, err := LoadFS(sub(dir), ""); !errors.Is(err, ErrNoTemplate) {
			t.Errorf("%s: err = %v, want ErrNoTemplate", dir, err)
		}
		if src, err := FindTemplate(sub(dir), ""); !errors.Is(err, ErrNoTemplate) {
			t.Errorf("%s: FindTemplate = %+v, %v; want ErrNoTemplate", dir, src, err)
		}
	}
	// The digest is of the bytes the template came from.
	sha := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for dir, want := range map[string]TemplateSource{
		"plain": {Origin: "tokenizer_config.json", SHA256: sha("{{ bos_token }}{{ messages[0].content }}{{ eos_token }}")},
		"file":  {Origin: "chat_template.jinja", SHA256: sha("file {{ bos_token }}\n")},
	} {
		if src, err := FindTemplate(sub(dir), ""); err != nil || src.Origin != want.Origin || src.SHA256 != want.SHA256 {
			t.Errorf("%s: FindTemplate = %+v, %v; want %s %s", dir, src, err, want.Origin, want.SHA256)
		}
	}
	render := func(dir, override string, in RenderInput) string {
		t.Helper()
		tmpl, err := LoadFS(sub(dir), override)
		if err != nil {
			t.Fatal(err)
		}
		out, err := tmpl.Render(in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := render("plain", "", RenderInput{Messages: msgs}); got != "<s>hi</s>" {
		t.Errorf("plain: %q", got)
	}
	if got := render("file", "", RenderInput{}); got != "file <s>" {
		t.Errorf("chat_template.jinja should win: %q", got)
	}
	if got := render("named", "", RenderInput{}); got != "D<a><b>" {
		t.Errorf("named default: %q", got)
	}
	if got := render("named", "", RenderInput{Tools: []any{1, 2}}); got != "T2" {
		t.Errorf("named with tools: %q", got)
	}
	if got := render("named", "", RenderInput{TemplateName: "rag"}); got != "R" {
		t.Errorf("named rag: %q", got)
	}
	override := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(override, []byte("override {{ eos_token }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := render("file", override, RenderInput{}); got != "override </s>" {
		t.Errorf("override: %q", got)
	}
	tmpl, _ := LoadFS(sub("plain"), "")
	want := map[string]any{"bos_token": "<s>", "eos_token": "</s>", "additional_special_tokens": []any{"<a>", "<b>"}}
	if got := fmt.Sprint(tmpl.SpecialTokens()); got != fmt.Sprint(want) {
		t.Errorf("SpecialTokens = %v, want %v", got, want)
	}
}

// TestConcurrentRender renders one compiled template from many goroutines;
// run with -race.
func TestConcurrentRender(t *testing.T) {
	tmpl, err := Compile(`{% set ns = namespace(n=0) %}{% macro m(x) %}[{{ x }}]{% endmacro %}` +
		`{% for msg in messages %}{% set ns.n = ns.n + 1 %}{{ m(msg.content) }}{{ loop.index }}{% endfor %}{{ ns.n }}{{ strftime_now('%Y') }}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				content := fmt.Sprintf("g%d-%d", g, i)
				out, err := tmpl.Render(RenderInput{
					Messages: ObjectsValue([]Object{{{Key: "content", Value: content}}}),
					Now:      time.Date(2000+g, 1, 1, 0, 0, 0, 0, time.UTC),
				})
				want := fmt.Sprintf("[%s]11%d", content, 2000+g)
				if err != nil || out != want {
					t.Errorf("got %q, %v; want %q", out, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestParseNow(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2025-07-10T12:00:00":       time.Date(2025, 7, 10, 12, 0, 0, 0, time.Local),
		"2025-07-10T12:00:00Z":      time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC),
		"2025-07-10T12:00:00+02:00": time.Date(2025, 7, 10, 10, 0, 0, 0, time.UTC),
		"2025-07-10":                time.Date(2025, 7, 10, 0, 0, 0, 0, time.Local),
	} {
		got, err := ParseNow(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseNow(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseNow("yesterday"); err == nil {
		t.Error("ParseNow(yesterday) succeeded")
	}
	t.Setenv(NowEnv, "2025-07-10T12:00:00")
	if got, err := NowFromEnv(); err != nil || got.Day() != 10 {
		t.Errorf("NowFromEnv = %v, %v", got, err)
	}
	t.Setenv(NowEnv, "")
	if got, err := NowFromEnv(); err != nil || !got.IsZero() {
		t.Errorf("NowFromEnv unset = %v, %v", got, err)
	}
}

func TestKwargsMergeAndReserved(t *testing.T) {
	tmpl, err := Compile(`{{ bos_token }}{{ enable_thinking }}`, WithSpecialTokens(map[string]any{"bos_token": "<s>"}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Render(RenderInput{Kwargs: map[string]any{"enable_thinking": false, "bos_token": "B"}})
	if err != nil || out != "BFalse" {
		t.Errorf("got %q, %v", out, err)
	}
	if _, err := tmpl.Render(RenderInput{Kwargs: map[string]any{"messages": nil}}); err == nil {
		t.Error("kwarg messages accepted")
	}
}
