package measure

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

// EndpointCase is a body of testdata/endpoints/bodies.jsonl.gz.
type EndpointCase struct {
	Case string          `json:"case"`
	ISL  int             `json:"isl"`
	Body json.RawMessage `json:"body"`
}

// EndpointRef is a line of testdata/endpoints/reference.jsonl.gz: the
// reference count of a body for a model, or the template error the
// reference met.
type EndpointRef struct {
	Model string `json:"model"`
	Case  string `json:"case"`
	ISL   int    `json:"isl"`
	Count *int   `json:"count"`
	Error string `json:"error"`
}

// TestEndpointsReference: measure --apply-chat-template --server vllm on
// completions and Responses bodies (string, list, token-id and token-id
// list prompts; Responses string input with and without instructions,
// items with text parts, history, a tool call and its output, a
// reasoning item; about 64, 1000 and 8000 tokens) counts what the
// independent reference counts (endpoint_ref.py + count_ref.cjs:
// vLLM's rules written from the reference document, Python Jinja2, the
// Rust tokenizers; scripts/check-endpoints-reference.sh --update made the
// files) for every reference model; where the reference's template
// raised, measure reports a template error.
func TestEndpointsReference(t *testing.T) {
	td := filepath.Join("testdata", "endpoints")
	cases := testutil.ReadJSONL[EndpointCase](t, filepath.Join(td, "bodies.jsonl.gz"))
	refs := testutil.ReadJSONL[EndpointRef](t, filepath.Join(td, "reference.jsonl.gz"))
	models := testutil.RefModels(t)
	if len(refs) != len(cases)*len(models) {
		t.Fatalf("%d reference lines for %d bodies and %d models", len(refs), len(cases), len(models))
	}
	byModel := map[string][]EndpointRef{}
	for _, r := range refs {
		byModel[r.Model] = append(byModel[r.Model], r)
	}
	counted, errs := 0, 0
	for _, model := range models {
		if len(byModel[model]) != len(cases) {
			t.Fatalf("%s: %d reference lines for %d bodies", model, len(byModel[model]), len(cases))
		}
		m := sharedMeasurer(t, model, Options{ApplyChatTemplate: true, Server: serverprofile.VLLM})
		for i, c := range cases {
			ref := byModel[model][i]
			name := fmt.Sprintf("%s %s/%d", model, c.Case, c.ISL)
			if ref.Model != model || ref.Case != c.Case || ref.ISL != c.ISL {
				t.Fatalf("%s: reference line is %s %s/%d", name, ref.Model, ref.Case, ref.ISL)
			}
			res, err := m.Record(c.Body)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			isl := lineISL(t, res.Lines[0])
			wantEndpoint, wantField := "completions", "prompt_tokens"
			if strings.HasPrefix(c.Case, "responses") {
				wantEndpoint, wantField = "responses", "input_tokens"
			}
			if string(isl.Endpoint) != wantEndpoint || isl.ServerField != wantField {
				t.Errorf("%s: endpoint %q server_field %q", name, isl.Endpoint, isl.ServerField)
			}
			if ref.Count == nil {
				errs++
				if isl.Counted != "bare" || isl.TemplateError == "" {
					t.Errorf("%s: the reference's template raised (%s); measure counted %s %v", name, ref.Error, isl.Counted, isl.Templated)
				}
				continue
			}
			counted++
			if isl.Counted != "templated" || isl.Templated == nil || *isl.Templated != *ref.Count {
				t.Errorf("%s: measure %s %v, reference %d", name, isl.Counted, isl.Templated, *ref.Count)
			}
		}
	}
	t.Logf("%d counts equal the reference, %d template errors on both sides", counted, errs)
	if counted < 180 {
		t.Errorf("only %d counts compared", counted)
	}
}

// Completions bodies without --apply-chat-template, and under the aiperf
// profile, are AIPerf's bare count: the texts joined by " " without
// special tokens, plus the token ids (payload_extraction.py). The
// reference's completions count differs from it by the BOS of each text
// prompt on a BOS-adding tokenizer (mistral7b adds <s>), which the gap
// names.
func TestCompletionsBareAndGap(t *testing.T) {
	m := sharedMeasurer(t, "mistral7b", Options{ApplyChatTemplate: true, Server: serverprofile.AIPerf})
	tok := m.opts.Tokenizer
	body := `{"model":"m","prompt":["Call me Ishmael.","Some years ago"]}`
	want := tok.Count("Call me Ishmael. Some years ago")
	rec := `{"kind":"islkit.request","schema_version":1,"conversation_id":"c","turn":0,"target_isl":` + fmt.Sprint(want+2) +
		`,"marker":"","payload":` + body + `,"result":{"usage":{"prompt_tokens":` + fmt.Sprint(tok.Count("Call me Ishmael.")+tok.Count("Some years ago")+2) + `}}}`
	line := one(t, m, rec)
	isl := lineISL(t, line)
	if isl.Counted != "bare" || *isl.Bare != want || isl.Endpoint != "completions" {
		t.Fatalf("isl %+v, want bare %d", isl, want)
	}
	testutil.ValidateSchema(t, "measurement.schema.json", line)
	// The server's count: two texts of two BOS-less encodings plus two
	// BOS; the join's own merges account for the rest.
	if g := isl.VsServer; g == nil || len(g.Causes) == 0 || g.Causes[0].Cause != records.CauseSpecialTokens || g.Causes[0].Tokens != 2 {
		t.Errorf("vs_server %+v: want special_tokens 2 first", g)
	}
	if g := isl.VsTarget; g == nil || g.Total != -2 || len(g.Causes) != 1 || g.Causes[0].Cause != records.CauseSpecialTokens {
		t.Errorf("vs_target %+v: want special_tokens -2", g)
	}
}

// Server usage is read under either name: prompt_tokens or the Responses
// API's input_tokens, and cached tokens as send flattens them or under
// prompt_tokens_details / input_tokens_details; an AIPerf raw record of a
// Responses stream takes its usage from the response.completed event.
func TestUsageUnderEitherName(t *testing.T) {
	for _, c := range []struct {
		usage          string
		server, cached int
	}{
		{`{"prompt_tokens":7,"cached_tokens":4}`, 7, 4},
		{`{"input_tokens":9,"input_tokens_details":{"cached_tokens":8}}`, 9, 8},
		{`{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":3}}`, 5, 3},
	} {
		n, err := promptTokens(json.RawMessage(c.usage))
		if err != nil || n == nil || *n != c.server {
			t.Errorf("%s: server %v %v, want %d", c.usage, n, err, c.server)
		}
		k, err := cachedTokens(json.RawMessage(c.usage))
		if err != nil || k == nil || *k != c.cached {
			t.Errorf("%s: cached %v %v, want %d", c.usage, k, err, c.cached)
		}
	}
	if _, err := promptTokens(json.RawMessage(`{"input_tokens":-1}`)); err == nil || !strings.Contains(err.Error(), "usage.input_tokens") {
		t.Errorf("a negative input_tokens: %v", err)
	}
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	sse := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"usage\":null}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":42,\"output_tokens\":3,\"total_tokens\":45}}}\n\n"
	raw, _ := json.Marshal(map[string]any{"payload": json.RawMessage(`{"model":"m","input":"Hi"}`), "responses": []string{sse}})
	isl := lineISL(t, one(t, m, string(raw)))
	if isl.Server == nil || *isl.Server != 42 || isl.ServerField != "input_tokens" || isl.Endpoint != "responses" {
		t.Errorf("isl %+v, want server 42 from input_tokens", isl)
	}
}

// --compare-server on a completions body: the profiles differ only in
// the special tokens of each text prompt (vLLM adds a BOS per prompt on
// a BOS-adding tokenizer, AIPerf counts the joined texts bare).
func TestCompletionsCompareServer(t *testing.T) {
	m := sharedMeasurer(t, "mistral7b", Options{ApplyChatTemplate: true, Server: serverprofile.VLLM, CompareServer: serverprofile.AIPerf})
	tok := m.opts.Tokenizer
	line := one(t, m, `{"model":"m","prompt":["Call me Ishmael."]}`)
	isl := lineISL(t, line)
	n := tok.Count("Call me Ishmael.")
	g := isl.VsProfile
	if *isl.Templated != n+1 || g == nil || *g.Count != n || g.Gap.Total != 1 || len(g.Gap.Causes) != 1 || g.Gap.Causes[0].Cause != records.CauseSpecialTokens {
		t.Errorf("isl %+v vs_profile %+v", isl, g)
	}
	testutil.ValidateSchema(t, "measurement.schema.json", line)
}

// AIPerf's inputs.json holds completions and Responses payloads too: each
// is measured as its endpoint's body.
func TestInputsJSONEndpoints(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	doc := `{"data":[{"session_id":"s","payloads":[{"model":"m","prompt":[[1,2,3]]},{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]}]}]}]}`
	res, err := m.Record([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != 2 {
		t.Fatalf("%d lines", len(res.Lines))
	}
	first, second := lineISL(t, res.Lines[0]), lineISL(t, res.Lines[1])
	if first.Endpoint != "completions" || *first.Templated != 3 {
		t.Errorf("completions payload: %+v", first)
	}
	if second.Endpoint != "responses" || second.Counted != "templated" || second.ServerField != "input_tokens" {
		t.Errorf("responses payload: %+v", second)
	}
}
