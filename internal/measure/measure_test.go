package measure

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

var wireModels = []string{"llama3", "llama3_1", "qwen3", "deepseek_v3", "gptoss", "mistral7b", "mistral7b-metaspace"}

// sharedMeasurer measures with a reference model, parsed once per test
// binary, and its own chat template, as `measure --tokenizer DIR` does.
func sharedMeasurer(t *testing.T, model string, opts Options) *Measurer {
	t.Helper()
	src := testmodel.Source(t, model)
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil && !errors.Is(err, chat.ErrNoTemplate) {
		t.Fatal(err)
	}
	opts.Tokenizer, _ = src.Tokenizer()
	opts.Template, opts.Now = tmpl, testutil.WireNow
	return New(opts)
}

// loadMeasurer loads a model as the measure command does (spec "" is the
// embedded default).
func loadMeasurer(t testing.TB, spec string, now time.Time, opts Options) *Measurer {
	t.Helper()
	m, err := model.Load(model.Options{Tokenizer: spec})
	if err == nil {
		err = m.TemplateErr
	}
	if err != nil {
		t.Fatal(err)
	}
	opts.Tokenizer, opts.Template, opts.Now = m.Tokenizer, m.Template, now
	return New(opts)
}

// TestWireGolden measures every line of the golden wire files as a message
// record under --server transformers (the goldens were rendered by
// transformers' rules): the rendering must equal "text" and the count
// "tokens". Under the default vllm profile, the cases with only string
// contents and no tools (what compose writes) must give the same.
func TestWireGolden(t *testing.T) {
	shared := testutil.RefDir(t)
	total, vllmChecked := 0, 0
	for _, model := range wireModels {
		m := sharedMeasurer(t, model, Options{ApplyChatTemplate: true, Rendered: true, Server: serverprofile.Transformers})
		mv := sharedMeasurer(t, model, Options{ApplyChatTemplate: true, Rendered: true})
		lines := testutil.ReadJSONL[json.RawMessage](t, filepath.Join(shared, "golden", "wire", model+".jsonl"))
		for i, line := range lines {
			n := i + 1
			var want struct {
				Case   string `json:"case"`
				Text   string `json:"text"`
				Tokens int    `json:"tokens"`
			}
			if err := json.Unmarshal(line, &want); err != nil {
				t.Fatal(err)
			}
			// Feed the golden line itself: it is a messages record whose
			// extra fields (text, ids, tokens) measure must pass through.
			in := strings.Replace(string(line), `"tokens":`, `"golden_tokens":`, 1)
			res, err := m.Record([]byte(in))
			if err != nil || len(res.Lines) != 1 {
				t.Errorf("%s:%d (%s): %v", model, n, want.Case, err)
				continue
			}
			out := res.Lines[0]
			var got struct {
				Tokens   int    `json:"tokens"`
				Rendered string `json:"rendered"`
				Counted  string `json:"counted"`
				Error    string `json:"error"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Counted != "templated" || got.Rendered != want.Text || got.Tokens != want.Tokens {
				t.Errorf("%s:%d (%s): counted %s %d tokens (want %d), error %q\n got %q\nwant %q",
					model, n, want.Case, got.Counted, got.Tokens, want.Tokens, got.Error, got.Rendered, want.Text)
			}
			total++
			if composeLike(t, line) {
				res, err := mv.Record([]byte(in))
				if err != nil || !strings.Contains(string(res.Lines[0]), fmt.Sprintf(`"tokens":%d,"counted":"templated"`, want.Tokens)) {
					t.Errorf("%s:%d (%s) under vllm: %v %s", model, n, want.Case, err, res.Lines)
				}
				vllmChecked++
			}
		}
	}
	if total != 295 {
		t.Errorf("checked %d wire lines, want 295", total)
	}
	if vllmChecked < 200 {
		t.Errorf("checked %d compose-like wire lines under vllm, want at least 200", vllmChecked)
	}
}

// composeLike reports whether a wire case has what compose writes: string
// contents only, no tools, no other message keys.
func composeLike(t *testing.T, line []byte) bool {
	var c struct {
		Messages []map[string]json.RawMessage `json:"messages"`
		Tools    json.RawMessage              `json:"tools"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		t.Fatal(err)
	}
	if c.Tools != nil {
		return false
	}
	for _, m := range c.Messages {
		if len(m) != 2 || len(m["content"]) == 0 || m["content"][0] != '"' {
			return false
		}
	}
	return true
}

func TestTextRecordsAndOrder(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{IDs: true})
	out := one(t, m, `{"z":0,"text":"Hello world","a":[1]}`)
	// Qwen's ids for "Hello" and " world", from the Rust library.
	want := `{"z":0,"text":"Hello world","a":[1],"tokens":2,"ids":[9707,1879]}`
	if string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestBareMessagesJoinTextPartsWithSpace(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{})
	rec := `{"messages":[{"role":"system","content":"Hello"},{"role":"user","content":[{"type":"text","text":"big"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":" world"}]}]}`
	out := one(t, m, rec)
	tok := m.opts.Tokenizer
	// AIPerf: every text (parts separately) joined by one space.
	want := tok.Count("Hello big  world")
	var got struct {
		Tokens  int    `json:"tokens"`
		Counted string `json:"counted"`
	}
	json.Unmarshal(out, &got)
	if got.Tokens != want || got.Counted != "bare" {
		t.Errorf("got %+v, want %d bare", got, want)
	}
}

func TestTemplateErrorFallsBackToBare(t *testing.T) {
	// Mistral's template raises on a system message; the record is still
	// counted (bare) and says why.
	m := sharedMeasurer(t, "mistral7b", Options{ApplyChatTemplate: true})
	out := one(t, m, `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]}`)
	var got struct {
		Tokens  int    `json:"tokens"`
		Counted string `json:"counted"`
		Error   string `json:"error"`
	}
	json.Unmarshal(out, &got)
	if got.Counted != "bare" || got.Tokens != m.opts.Tokenizer.Count("S Hi") || !strings.Contains(got.Error, "chat template") {
		t.Errorf("got %+v", got)
	}
}

func TestBadRecords(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{})
	for _, in := range []string{`[1,2]`, `{"text":5}`, `{"messages":"hi"}`, `{"messages":[{"role":"user","content":5}]}`, `{"other":1}`, `{"text":"a"`} {
		if res, err := m.Record([]byte(in)); err == nil {
			t.Errorf("Record(%s) = %s, want an error", in, res.Lines)
		}
	}
}

// one measures a record that must give exactly one output line.
func one(t *testing.T, m *Measurer, rec string) []byte {
	t.Helper()
	res, err := m.Record([]byte(rec))
	if err != nil {
		t.Fatalf("Record(%s): %v", rec, err)
	}
	if len(res.Lines) != 1 {
		t.Fatalf("Record(%s) gave %d lines", rec, len(res.Lines))
	}
	return res.Lines[0]
}
