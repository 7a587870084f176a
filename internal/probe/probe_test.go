package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// words counts whitespace-separated words: AIPerf's fake encode.
type words struct{ calls int }

func (w *words) Count(s string) int { w.calls++; return len(strings.Fields(s)) }

// countingTemplate counts Render calls.
type countingTemplate struct {
	t     *chat.Template
	calls int
}

func (c *countingTemplate) Render(in chat.RenderInput) (string, error) {
	c.calls++
	return c.t.Render(in)
}

// fakeLlama renders AIPerf's fake Llama-3-like template in words: BOS (1),
// a 4-word header and 1-word end per message (wrap 5), a 3-word
// generation prompt (fixed 1 + 3 = 4).
const fakeLlama = `BOS {% for m in messages %}h1 h2 h3 {{ m.role }} {{ m.content }} EOT {% endfor %}{% if add_generation_prompt %}g1 g2 g3{% endif %}`

func TestOverheadDecomposesFakeTemplate(t *testing.T) {
	tmpl, err := chat.Compile(fakeLlama)
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTemplate{t: tmpl}
	got := Overhead(ct, &words{}, time.Time{})
	if got.Fixed != 4 || got.Wrap != 5 || got.Reason != "" {
		t.Errorf("overhead = (%d, %d, %q), want (4, 5, \"\")", got.Fixed, got.Wrap, got.Reason)
	}
	if ct.calls != 6 {
		t.Errorf("template rendered %d times, want 2 per sample = 6", ct.calls)
	}
	// Sample 1 (5 words): single 4+5+5 = 14, triple 4+15+15 = 34.
	s := got.Samples[0]
	if s.Bare != 5 || s.Single != 14 || s.Triple != 34 || s.Wrap != 5 || s.Fixed != 4 {
		t.Errorf("sample 1 = %+v, want bare 5 single 14 triple 34 wrap 5 fixed 4", s)
	}
	if len(got.Samples) != 3 {
		t.Errorf("%d samples in the record, want 3", len(got.Samples))
	}
}

func TestOverheadDefensiveZeros(t *testing.T) {
	raising, err := chat.Compile(`{{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}`)
	if err != nil {
		t.Fatal(err)
	}
	oneWord, err := chat.Compile(`x`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		tmpl   Renderable
		c      Counter
		reason string
	}{
		{"no template", nil, &words{}, "no chat template"},
		{"template raises", raising, &words{}, "roles must alternate"},
		// apply gives 1 token, encode 50: wrap (1-1-100)/2 = -50.
		{"negative wrap", oneWord, counterFunc(func(s string) int {
			if s == "x" {
				return 1
			}
			return 50
		}), "implausible"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Overhead(tc.tmpl, tc.c, time.Time{})
			if got.Fixed != 0 || got.Wrap != 0 || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("got (%d, %d, %q), want (0, 0, …%s…)", got.Fixed, got.Wrap, got.Reason, tc.reason)
			}
		})
	}
}

type counterFunc func(string) int

func (f counterFunc) Count(s string) int { return f(s) }

func TestMarkerCost(t *testing.T) {
	quarter := counterFunc(func(s string) int { return int(math.Ceil(float64(len(s)) / 4)) })
	for _, target := range []cachebust.Target{cachebust.SystemPrefix, cachebust.SystemSuffix, cachebust.FirstTurnPrefix, cachebust.FirstTurnSuffix} {
		if got, _ := MarkerCost(target, quarter); got != 5 {
			t.Errorf("%s: 20-char markers at ceil(len/4) cost %d, want 5", target, got)
		}
	}
	n := 0
	jitter := counterFunc(func(string) int { n++; return 5 + (n+1)%2 }) // 5, 6, 5, 6, …: mean 5.5
	if got, samples := MarkerCost(cachebust.FirstTurnPrefix, jitter); got != 6 || len(samples) != 8 {
		t.Errorf("mean 5.5 rounds to %d with %d samples, want 6 (half-to-even) and 8", got, len(samples))
	}
	w := &words{}
	if got, samples := MarkerCost(cachebust.None, w); got != 0 || samples != nil || w.calls != 0 {
		t.Errorf("none: cost %d, samples %v, %d encodes; want 0, nil, 0", got, samples, w.calls)
	}
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Expected values from the reference (oracle/wire_ref.py +
// tokenize_ref.cjs): per sample {bare, single, triple}, then the rounded
// means.
var realOverheads = []struct {
	model       string
	fixed, wrap int
	samples     [3][3]int
}{
	{"deepseek_v3", 2, 2, [3][3]int{{7, 10, 27}, {11, 14, 39}, {11, 14, 39}}},
	{"gptoss", 62, 5, [3][3]int{{7, 74, 98}, {11, 78, 110}, {10, 77, 107}}},
	{"llama3", 5, 5, [3][3]int{{7, 17, 41}, {11, 21, 53}, {11, 21, 53}}},
	{"llama3_1", 5, 5, [3][3]int{{7, 17, 41}, {11, 21, 53}, {11, 21, 53}}},
	{"mistral7b", 4, 4, [3][3]int{{7, 15, 38}, {11, 19, 50}, {13, 21, 56}}},
	{"mistral7b-metaspace", 4, 4, [3][3]int{{7, 15, 37}, {11, 19, 49}, {13, 21, 55}}},
	{"qwen3", 3, 5, [3][3]int{{7, 15, 39}, {11, 19, 51}, {11, 19, 51}}},
}

// Marker samples counted by the reference tokenizer.
var realMarkers = map[string]map[cachebust.Target][]int{
	"llama3":    {cachebust.FirstTurnPrefix: {11, 11, 11, 10, 9, 9, 11, 10}, cachebust.SystemSuffix: {12, 12, 12, 11, 10, 10, 12, 11}},
	"mistral7b": {cachebust.FirstTurnPrefix: {18, 15, 16, 16, 17, 18, 16, 18}, cachebust.SystemSuffix: {19, 16, 17, 17, 18, 19, 17, 19}},
	"qwen3":     {cachebust.FirstTurnPrefix: {16, 13, 13, 12, 14, 16, 14, 15}, cachebust.SystemSuffix: {17, 14, 14, 13, 15, 17, 15, 16}},
}

func TestRunRealModels(t *testing.T) {
	shared := testutil.RefDir(t)
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	for _, want := range realOverheads {
		t.Run(want.model, func(t *testing.T) {
			dir := filepath.Join(shared, "models", want.model)
			rec, err := Run(Options{Source: testmodel.Source(t, want.model), ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnPrefix, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			o := rec.Overhead
			if o.Fixed != want.fixed || o.Wrap != want.wrap || o.Reason != "" {
				t.Errorf("overhead (%d, %d, %q), want (%d, %d)", o.Fixed, o.Wrap, o.Reason, want.fixed, want.wrap)
			}
			for i, s := range o.Samples {
				if [3]int{s.Bare, s.Single, s.Triple} != want.samples[i] {
					t.Errorf("sample %d: {bare, single, triple} = {%d, %d, %d}, reference %v", i, s.Bare, s.Single, s.Triple, want.samples[i])
				}
			}
			if rec.Tokenizer.SHA256 != fileSHA(t, filepath.Join(dir, "tokenizer.json")) {
				t.Error("tokenizer sha256 is not the SHA-256 of tokenizer.json")
			}
			tmplFile := filepath.Join(dir, "chat_template.jinja")
			if _, err := os.Stat(tmplFile); err == nil {
				if rec.ChatTemplate.Origin != "chat_template.jinja" || rec.ChatTemplate.SHA256 != fileSHA(t, tmplFile) {
					t.Errorf("template identity %+v, want chat_template.jinja with its file hash", rec.ChatTemplate)
				}
			} else if rec.ChatTemplate.Origin != "tokenizer_config.json" || len(rec.ChatTemplate.SHA256) != 64 {
				t.Errorf("template identity %+v, want tokenizer_config.json", rec.ChatTemplate)
			}
			if m, ok := realMarkers[want.model]; ok {
				if got := rec.MarkerSamples; !slices.Equal(got, m[cachebust.FirstTurnPrefix]) {
					t.Errorf("marker samples %v, reference %v", got, m[cachebust.FirstTurnPrefix])
				}
				rs, _ := Run(Options{Source: testmodel.Source(t, want.model), CacheBust: cachebust.SystemSuffix})
				if !slices.Equal(rs.MarkerSamples, m[cachebust.SystemSuffix]) {
					t.Errorf("system_suffix marker samples %v, reference %v", rs.MarkerSamples, m[cachebust.SystemSuffix])
				}
			}
			if rec.Now != "2025-07-10T12:00:00Z" || rec.Kind != records.KindProbe || rec.SchemaVersion != records.SchemaVersion || rec.ToolVersion == "" {
				t.Errorf("record header: kind %q version %d tool %q now %q", rec.Kind, rec.SchemaVersion, rec.ToolVersion, rec.Now)
			}
			data, _ := json.Marshal(rec)
			testutil.ValidateSchema(t, "probe.schema.json", data)
		})
	}
}

// A model folder without a chat template, and a template that does not
// compile: zeros with the reason, never an error; and without
// --apply-chat-template no template is even compiled.
func TestRunWithoutUsableTemplate(t *testing.T) {
	shared := testutil.RefDir(t)
	dir := t.TempDir()
	tj, err := os.ReadFile(filepath.Join(shared, "models", "llama3", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644)
	os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"bos_token": "<|begin_of_text|>", "chat_template": null}`), 0o644)
	src, err := modelsrc.Resolve(dir) // parsed once for the four runs
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Run(Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.None})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Overhead.Fixed != 0 || rec.Overhead.Wrap != 0 || rec.Overhead.Reason != "no chat template" || rec.ChatTemplate.SHA256 != "" {
		t.Errorf("no template: %+v %+v", rec.Overhead, rec.ChatTemplate)
	}
	if rec.MarkerTokens != 0 || rec.MarkerSamples != nil {
		t.Errorf("target none: marker %d %v", rec.MarkerTokens, rec.MarkerSamples)
	}
	if rec.Tokenizer.SpecialTokens["bos_token"] != "<|begin_of_text|>" {
		t.Errorf("special tokens %v", rec.Tokenizer.SpecialTokens)
	}
	broken := filepath.Join(dir, "broken.jinja")
	os.WriteFile(broken, []byte(`{% for %}`), 0o644)
	rec, err = Run(Options{Source: src, ChatTemplate: broken, ApplyChatTemplate: true, CacheBust: cachebust.None})
	if err != nil || rec.Overhead.Wrap != 0 || !strings.Contains(rec.Overhead.Reason, "unusable") {
		t.Errorf("broken template: err %v, overhead %+v", err, rec.Overhead)
	}
	rec, err = Run(Options{Source: src, ChatTemplate: broken, CacheBust: cachebust.None})
	if err != nil || rec.Overhead.Samples != nil || !strings.Contains(rec.Overhead.Reason, "not applied") || rec.ChatTemplate.Applied {
		t.Errorf("flag off: err %v, overhead %+v", err, rec.Overhead)
	}
	if rec.ChatTemplate.SHA256 != fileSHA(t, broken) || rec.ChatTemplate.Override != broken {
		t.Errorf("override identity %+v", rec.ChatTemplate)
	}
	if _, err := Run(Options{Source: src, ChatTemplate: filepath.Join(dir, "missing.jinja"), CacheBust: cachebust.None}); err == nil {
		t.Error("a missing --chat-template file should be an error")
	}
}

// Mistral v0.1 raises on a system message but not on [user, assistant,
// user], so the probe itself works there.
func TestRunMistralRaisesOnlyOnSystem(t *testing.T) {
	rec, err := Run(Options{Source: testmodel.Source(t, "mistral7b"), ApplyChatTemplate: true, CacheBust: cachebust.None})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Overhead.Reason != "" || rec.Tokenizer.NumSpecialTokensToAdd != 1 {
		t.Errorf("mistral: %+v, num_special_tokens_to_add %d (want 1: BOS)", rec.Overhead, rec.Tokenizer.NumSpecialTokensToAdd)
	}
}
