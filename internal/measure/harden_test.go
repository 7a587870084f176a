package measure

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// TestIDsOfEmptyTextIsEmptyArray: an empty text has no tokens, and its ids
// are the empty JSON array, never null (issue 11, item 21).
func TestIDsOfEmptyTextIsEmptyArray(t *testing.T) {
	m := defaultMeasurer(t)
	out := one(t, m, `{"text":""}`)
	if want := `{"text":"","tokens":0,"ids":[]}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

// sendRec is a send record of one user turn; result is the raw "result"
// member ("" for none) and target the raw "target_isl".
func sendRec(target, result string) string {
	rec := `{"kind":"islkit.request","schema_version":1,"conversation_id":"c","turn":0,"target_isl":` + target +
		`,"marker":"","payload":{"model":"m","messages":[{"role":"user","content":"Hello there"}]}`
	if result != "" {
		rec += `,"result":` + result
	}
	return rec + "}"
}

// TestUsageWithoutPromptTokensIsNoServerCount: a usage object that does not
// carry prompt_tokens (empty, null, only completion tokens) is not a server
// count of 0 (issue 11, item 11).
func TestUsageWithoutPromptTokensIsNoServerCount(t *testing.T) {
	m := defaultMeasurer(t)
	for _, result := range []string{
		`{"status":200,"ok":true,"usage":{}}`,
		`{"status":200,"ok":true,"usage":null}`,
		`{"status":200,"ok":true,"usage":{"prompt_tokens":null,"completion_tokens":3,"total_tokens":3}}`,
		`{"status":200,"ok":true,"usage":{"completion_tokens":3,"total_tokens":3}}`,
	} {
		isl := islOf(t, m, sendRec("10", result))
		if isl.Server != nil || isl.VsServer != nil {
			t.Errorf("result %s: server %s, vs_server %+v; want neither", result, fmtCount(isl.Server), isl.VsServer)
		}
	}
	// AIPerf's raw responses: a usage chunk without prompt_tokens neither.
	raw := `{"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"responses":[{"text":"data: {\"usage\":{\"completion_tokens\":4,\"total_tokens\":4}}"}]}`
	if isl := islOf(t, m, raw); isl.Server != nil {
		t.Errorf("AIPerf record: server %d, want none", *isl.Server)
	}
}

// TestBadCountsRejectedWithFileLineField: negative or non-integer counts are
// bad input, reported with file, line and field (issue 11, item 11).
func TestBadCountsRejectedWithFileLineField(t *testing.T) {
	m := defaultMeasurer(t)
	for _, c := range []struct{ rec, field string }{
		{sendRec("10", `{"status":200,"ok":true,"usage":{"prompt_tokens":-5}}`), "result.usage.prompt_tokens"},
		{sendRec("10", `{"status":200,"ok":true,"usage":{"prompt_tokens":7.5}}`), "result.usage.prompt_tokens"},
		{sendRec("10", `{"status":200,"ok":true,"usage":{"prompt_tokens":"7"}}`), "result.usage.prompt_tokens"},
		{sendRec("-1000", ""), "target_isl"},
		{sendRec("12.5", ""), "target_isl"},
		{sendRec(`"12"`, ""), "target_isl"},
		{`{"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"responses":["data: {\"usage\":{\"prompt_tokens\":-3}}"]}`, "responses.0.usage.prompt_tokens"},
	} {
		_, err := m.Line(jsonl.Line{File: "in.jsonl", Num: 3, Data: []byte(c.rec)})
		want := `in.jsonl:3: field "` + c.field + `": `
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
			t.Errorf("%s: error %v, want one starting %q", c.rec, err, want)
		}
	}
}

func fmtCount(n *int) string {
	if n == nil {
		return "none"
	}
	return strconv.Itoa(*n)
}

// TestTemplateErrorIsNamedAndCounted: with --apply-chat-template, a
// template that raises or is missing counts the request bare; its gaps are
// blamed on template_error, not unexplained, and the run has one warning
// that says how many requests (issue 11, item 12).
func TestTemplateErrorIsNamedAndCounted(t *testing.T) {
	tok := defaultMeasurer(t).opts.Tokenizer
	raising, err := chat.Compile(`{{ raise_exception("this template takes no system message") }}`)
	if err != nil {
		t.Fatal(err)
	}
	for name, tmpl := range map[string]*chat.Template{"raising": raising, "missing": nil} {
		m := New(Options{Tokenizer: tok, Template: tmpl, ApplyChatTemplate: true})
		if w := m.Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings %q before any record", name, w)
		}
		bare := tok.Count("Hello there")
		for i := 0; i < 3; i++ {
			isl := islOf(t, m, sendRec(strconv.Itoa(bare+7), fmt.Sprintf(`{"status":200,"ok":true,"usage":{"prompt_tokens":%d}}`, bare+9)))
			if isl.Counted != "bare" || isl.TemplateError == "" {
				t.Fatalf("%s: counted %s, template error %q", name, isl.Counted, isl.TemplateError)
			}
			for gname, g := range map[string]*records.Gap{"vs_target": isl.VsTarget, "vs_server": isl.VsServer} {
				if c := causes(g); len(c) != 1 || c[records.CauseTemplateError] != g.Total {
					t.Errorf("%s: %s causes %v, want all %d tokens template_error", name, gname, c, g.Total)
				}
			}
		}
		// A messages record counts too.
		one(t, m, `{"messages":[{"role":"user","content":"Hi"}]}`)
		w := m.Warnings()
		if len(w) != 1 || !strings.Contains(w[0], "4 request") {
			t.Errorf("%s: warnings %q, want one naming 4 requests", name, w)
		}
	}
}

// TestOtherToolsOutputSaysWhatToRun: compose's conversations (and probe's
// record) are not requests; the error says which tool makes them from it
// (issue 11, item 13).
func TestOtherToolsOutputSaysWhatToRun(t *testing.T) {
	m := defaultMeasurer(t)
	for rec, want := range map[string]string{
		`{"kind":"islkit.conversation","schema_version":1,"id":"c","turns":[]}`: "send --dry-run",
		`{"kind":"islkit.probe","schema_version":1}`:                            "compose",
	} {
		_, err := m.Record([]byte(rec))
		if err == nil || !strings.Contains(err.Error(), want) || FailureKind(err) != FailUnknownShape {
			t.Errorf("%s: %v (kind %s), want a hint naming %q", rec, err, FailureKind(err), want)
		}
	}
}

// hostileTokenizer is a tokenizer.json whose Split pattern backtracks
// exponentially on a run of "a" that ends in no "b".
const hostileTokenizer = `{"version":"1.0","added_tokens":[],"normalizer":null,
 "pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a+)+b"},"behavior":"Isolated","invert":false},
 "post_processor":null,"decoder":null,
 "model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"vocab":{"a":0,"b":1,"c":2,"aa":3},"merges":[["a","a"]]}}`

// TestHostileSplitPatternFailsTheLine: a record whose text makes the
// tokenizer's regex time out fails on its own, with the reason, instead of
// hanging or crashing the run (issue 11, item 18).
func TestHostileSplitPatternFailsTheLine(t *testing.T) {
	defer func(d time.Duration) { regex.MatchTimeout = d }(regex.MatchTimeout)
	regex.MatchTimeout = 50 * time.Millisecond
	tok, err := tokenizer.FromJSON([]byte(hostileTokenizer))
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Tokenizer: tok})
	if out := one(t, m, `{"text":"aab"}`); string(out) != `{"text":"aab","tokens":2}` { // "aa", "b"
		t.Errorf("got %s", out)
	}
	_, err = m.Line(jsonl.Line{File: "in.jsonl", Num: 2, Data: []byte(`{"text":"` + strings.Repeat("a", 64) + `c"}`)})
	if err == nil || !strings.Contains(err.Error(), "in.jsonl:2") || !strings.Contains(err.Error(), "backtracks") {
		t.Errorf("error %v, want the line to fail with the timeout", err)
	}
}

// TestReadInputSkipsBOM: a pretty-printed inputs.json saved with a BOM is
// still read as one document (issue 11, item 13).
func TestReadInputSkipsBOM(t *testing.T) {
	r, err := ReadInput(strings.NewReader("\ufeff{\n  \"data\": []\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := io.Copy(&b, r); err != nil {
		t.Fatal(err)
	}
	if b.String() != `{"data":[]}`+"\n" {
		t.Errorf("got %q, want the compacted document", b.String())
	}
}
