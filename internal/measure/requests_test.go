package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

type islOut struct {
	ISL records.ISL `json:"isl"`
}

func islOf(t *testing.T, m *Measurer, rec string) records.ISL {
	t.Helper()
	return lineISL(t, one(t, m, rec))
}

// lineISL is the isl member of one measured line.
func lineISL(t *testing.T, line []byte) records.ISL {
	t.Helper()
	var o islOut
	if err := json.Unmarshal(line, &o); err != nil {
		t.Fatal(err)
	}
	return o.ISL
}

// templatedCount renders messages (JSON) with the measurer's template and
// counts them: the independent expectation for the tests below.
func templatedCount(t *testing.T, m *Measurer, messages string, tools string) int {
	t.Helper()
	msgs, err := chat.DecodeJSON([]byte(messages))
	if err != nil {
		t.Fatal(err)
	}
	in := chat.RenderInput{Messages: msgs, AddGenerationPrompt: true, Now: m.opts.Now}
	if tools != "" {
		in.Tools = json.RawMessage(tools)
	}
	text, err := m.opts.Template.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	return m.opts.Tokenizer.Count(text)
}

func causes(g *records.Gap) map[string]int {
	out := map[string]int{}
	if g != nil {
		for _, c := range g.Causes {
			out[c.Cause] = c.Tokens
		}
	}
	return out
}

func TestSendRecordServerGapDoubledBOS(t *testing.T) {
	m := sharedMeasurer(t, "llama3_1", Options{ApplyChatTemplate: true})
	msgs := `[{"role":"user","content":"[rid:eb232ceb3496]\n\nHello there"}]`
	want := templatedCount(t, m, msgs, "")
	// A server that tokenizes the rendered prompt with special tokens adds
	// a second <|begin_of_text|>: one more token than the template's.
	rec := fmt.Sprintf(`{"kind":"islkit.request","schema_version":1,"conversation_id":"c","turn":0,"target_isl":%d,"marker":"[rid:eb232ceb3496]\n\n","payload":{"model":"m","messages":%s},"result":{"status":200,"ok":true,"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}}`,
		want, msgs, want+1, want+2)
	isl := islOf(t, m, rec)
	if isl.Templated == nil || *isl.Templated != want || isl.Counted != "templated" {
		t.Fatalf("templated %v (%s), want %d", isl.Templated, isl.Counted, want)
	}
	if isl.VsTarget == nil || isl.VsTarget.Total != 0 {
		t.Errorf("vs target %+v, want 0", isl.VsTarget)
	}
	if isl.VsServer == nil || isl.VsServer.Total != 1 || causes(isl.VsServer)[records.CauseDoubledBOS] != 1 {
		t.Errorf("vs server %+v, want 1 doubled_bos", isl.VsServer)
	}
}

func TestAIPerfRawRecordUsageFromSSE(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	msgs := `[{"role":"user","content":"Hi"}]`
	want := templatedCount(t, m, msgs, "")
	rec := fmt.Sprintf(`{"metadata":{"conversation_id":"s1","turn_index":2},"payload":{"model":"m","messages":%s,"stream":true},`+
		`"responses":[{"perf_ns":1,"text":"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"},`+
		`{"perf_ns":2,"text":"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\n"},`+
		// A usage counting nothing does not replace the one before it.
		`{"perf_ns":3,"text":"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}}\n\ndata: [DONE]\n\n"}]}`, msgs, want)
	isl := islOf(t, m, rec)
	if isl.Server == nil || *isl.Server != want || isl.VsServer == nil || isl.VsServer.Total != 0 {
		t.Errorf("server %v gap %+v, want %d and 0", isl.Server, isl.VsServer, want)
	}
	if isl.ConversationID != "s1" || isl.TurnIndex == nil || *isl.TurnIndex != 2 {
		t.Errorf("conversation %q turn %v", isl.ConversationID, isl.TurnIndex)
	}
}

func TestNoToolsReproducesAIPerfAndExplainsTheGap(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true, NoTools: true})
	msgs := `[{"role":"user","content":"Weather in Paris?"}]`
	tools := `[{"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	withTools := templatedCount(t, m, msgs, tools)
	noTools := templatedCount(t, m, msgs, "")
	toolText := m.opts.Tokenizer.Count(`get_weather Get the weather {"type":"object","properties":{"city":{"type":"string"}}}`)
	rec := fmt.Sprintf(`{"payload":{"model":"m","messages":%s,"tools":%s},"responses":["{\"usage\":{\"prompt_tokens\":%d}}"]}`, msgs, tools, withTools)
	isl := islOf(t, m, rec)
	// AIPerf: the template without tools, plus the tool texts counted bare.
	if isl.Templated == nil || *isl.Templated != noTools+toolText {
		t.Fatalf("templated %v, want %d + %d", isl.Templated, noTools, toolText)
	}
	if got := causes(isl.VsServer)[records.CauseTools]; got != withTools-noTools-toolText || isl.VsServer.Total != got {
		t.Errorf("vs server %+v, want tools %d", isl.VsServer, withTools-noTools-toolText)
	}
	// Without --no-tools the request's tools reach the template, as on the server.
	m2 := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	if isl := islOf(t, m2, rec); *isl.Templated != withTools || isl.VsServer.Total != 0 {
		t.Errorf("with tools: templated %d, gap %+v; want %d, 0", *isl.Templated, isl.VsServer, withTools)
	}
}

func TestPartJoinAndMediaCauses(t *testing.T) {
	// AIPerf's view (parts joined with "", media dropped) against a
	// multimodal vLLM-like server; --server vllm would refuse the image
	// for our text-only model (TestVLLMRefusesMedia).
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true, Server: serverprofile.AIPerf})
	body := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"[rid:eb232ceb3496]"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"Describe it."}]}]}`
	joined := templatedCount(t, m, `[{"role":"user","content":"[rid:eb232ceb3496]Describe it."}]`, "")
	newline := templatedCount(t, m, `[{"role":"user","content":"[rid:eb232ceb3496]\nDescribe it."}]`, "")
	// A vLLM-like server: parts joined with "\n", and 64 image tokens.
	server := newline + 64
	rec := fmt.Sprintf(`{"payload":%s,"responses":["{\"usage\":{\"prompt_tokens\":%d}}"]}`, body, server)
	isl := islOf(t, m, rec)
	if *isl.Templated != joined || isl.Media == nil || isl.Media.Images != 1 {
		t.Fatalf("templated %d media %+v, want %d and one image", *isl.Templated, isl.Media, joined)
	}
	c := causes(isl.VsServer)
	if c[records.CausePartJoin] != newline-joined || c[records.CauseMedia] != 64 || isl.VsServer.Total != server-joined {
		t.Errorf("vs server %+v, want part join %d, media 64", isl.VsServer, newline-joined)
	}
}

func TestMarkerCauseVsTarget(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	marker := "[rid:8e15353008f0]\n\n"
	content := "Hello, how are you today?"
	msgs := fmt.Sprintf(`[{"role":"user","content":%q}]`, marker+content)
	got := templatedCount(t, m, msgs, "")
	target := got - 3
	rec := fmt.Sprintf(`{"kind":"islkit.request","schema_version":1,"turn":0,"target_isl":%d,"marker":%q,"payload":{"model":"m","messages":%s}}`, target, marker, msgs)
	isl := islOf(t, m, rec)
	if isl.VsTarget.Total != 3 {
		t.Fatalf("vs target %+v, want 3", isl.VsTarget)
	}
	// The marker's share is its real cost minus probe's estimate. The Rust
	// library counts this marker as 16 Qwen3 tokens and the estimator's
	// eight sample markers as 16 13 13 12 14 16 14 15 (mean 14.125 → 14).
	cs := causes(isl.VsTarget)
	if cs[records.CauseMarker] != 2 {
		t.Errorf("marker cause %d, want 16 − 14 = 2 (causes %+v)", cs[records.CauseMarker], isl.VsTarget.Causes)
	}
	// One user message: the probe's fixed + wrap is this template's own cost.
	if cs[records.CauseTemplate] != 0 {
		t.Errorf("template cause %d, want 0 (causes %+v)", cs[records.CauseTemplate], isl.VsTarget.Causes)
	}
}

func TestInputsJSONDocument(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	doc := `{"data":[{"session_id":"a","payloads":[{"messages":[{"role":"user","content":"Hi"}]},{"messages":"bad"}]},{"session_id":"b","payloads":[{"messages":[{"role":"user","content":"Yo"}]}]}]}`
	res, err := m.Record([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), "data[0].payloads[1]") {
		t.Errorf("error %v should name data[0].payloads[1]", err)
	}
	if len(res.Lines) != 2 || len(res.Requests) != 2 {
		t.Fatalf("got %d records, want 2 (the bad payload skipped)", len(res.Lines))
	}
	if !strings.HasPrefix(string(res.Lines[1]), `{"session_id":"b","turn":0,`) {
		t.Errorf("second record %s", res.Lines[1])
	}
	if _, err := m.Record([]byte(`{"data":5}`)); err == nil {
		t.Error("inputs.json with data 5 accepted")
	}
}

func TestNullTemplateShortCircuitsToBare(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	m.opts.Template = nil // a base model: chat_template is null
	isl := islOf(t, m, `{"model":"m","messages":[{"role":"user","content":"Hello"},{"role":"user","content":"world"}]}`)
	if isl.Counted != "bare" || isl.Templated != nil || isl.Bare == nil || *isl.Bare != m.opts.Tokenizer.Count("Hello world") {
		t.Errorf("got %+v, want bare count of \"Hello world\"", isl)
	}
}

// TestOutputMatchesSchema validates real measure output of each request
// shape against schemas/measurement.schema.json.
func TestOutputMatchesSchema(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true, Bare: true, Server: serverprofile.AIPerf, CompareServer: serverprofile.VLLM})
	for _, rec := range []string{
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"kind":"islkit.request","schema_version":1,"conversation_id":"c","turn":1,"target_isl":3,"marker":"","payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"result":{"usage":{"prompt_tokens":40}}}`,
		`{"payload":{"messages":[{"role":"user","content":"Hi"}]},"responses":["{\"usage\":{\"prompt_tokens\":9}}"]}`,
	} {
		testutil.ValidateSchema(t, "measurement.schema.json", one(t, m, rec))
	}
	m = sharedMeasurer(t, "mistral7b", Options{ApplyChatTemplate: true})
	out := one(t, m, `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]}`)
	testutil.ValidateSchema(t, "measurement.schema.json", out)
	if !strings.Contains(string(out), `"template_error"`) {
		t.Errorf("mistral's template should raise on a system message: %s", out)
	}
}

// A live send record brings its outcome (the result's timings, usage and
// error kind) to the summary; the client's schedule lag and the warmup
// mark are read where send writes them; a dry run brings none.
func TestSendRecordLiveOutcome(t *testing.T) {
	m := defaultMeasurer(t)
	head := `"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":2,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]}`
	live := `{` + head + `,"dry_run":false,"warmup":true,"schedule_lag_ns":7,"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"itl_ns":[300,500],"status":200,"ok":true,"stream":true,"chunks":4,"output_text":"a b c","usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}}`
	res, err := m.Record([]byte(live))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Requests[0]
	l := r.Live
	if l == nil || !r.Warmup || l.StartNs != 1000 || l.LatencyNs != 900 || l.TTFTNs == nil || *l.TTFTNs != 100 ||
		fmt.Sprint(l.ITLNs) != "[300 500]" || !l.OK || !l.Stream || l.Usage.CompletionTokens != 3 ||
		l.ScheduleLagNs == nil || *l.ScheduleLagNs != 7 || *r.ISL.TurnIndex != 2 || *r.ISL.Server != 12 {
		t.Errorf("request %+v live %+v", r, l)
	}
	failed := `{` + head + `,"dry_run":false,"result":{"start_ns":5,"latency_ns":9,"status":503,"ok":false,"stream":true,"error":{"kind":"http_5xx","message":"x"},"schedule_lag_ns":3}}`
	if res, err = m.Record([]byte(failed)); err != nil {
		t.Fatal(err)
	}
	if l := res.Requests[0].Live; l == nil || l.OK || l.Error == nil || l.Error.Kind != "http_5xx" || *l.ScheduleLagNs != 3 || res.Requests[0].Warmup {
		t.Errorf("failed: %+v", res.Requests[0])
	}
	dry := `{` + head + `,"dry_run":true}`
	if res, err = m.Record([]byte(dry)); err != nil {
		t.Fatal(err)
	}
	if res.Requests[0].Live != nil {
		t.Errorf("dry run has an outcome: %+v", res.Requests[0].Live)
	}
}

// TestProfileCausesInSchema: every rule family a profile comparison can
// name is a cause the measurement schema allows.
func TestProfileCausesInSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "measurement.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range serverprofile.Causes() {
		if !strings.Contains(string(data), `"`+c+`"`) {
			t.Errorf("cause %q is not in measurement.schema.json", c)
		}
	}
}

// TestVLLMRefusesMedia: under the default vllm profile an image part for
// our text-only model fails the line, naming the rule; the summary counts
// it as "refused".
func TestVLLMRefusesMedia(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	_, err := m.Record([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "vllm would refuse this request: media part for a text-only model") || FailureKind(err) != FailRefused {
		t.Errorf("error %v (kind %s), want a vllm refusal of the media part", err, FailureKind(err))
	}
}

// TestVLLMRefusesObjectToolArguments: an assistant tool call whose
// function.arguments is a JSON object is a 400 from a real vLLM 0.32
// (testdata/vllm/expectations.jsonl.gz, tool_args_dict): the line fails,
// naming the rule; the same call with string arguments is measured.
func TestVLLMRefusesObjectToolArguments(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	body := func(args string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":` + args + `}}]},{"role":"tool","tool_call_id":"c1","content":"22C"}]}`)
	}
	_, err := m.Record(body(`{"city":"Paris"}`))
	if err == nil || !strings.Contains(err.Error(), "vllm would refuse this request: tool-call arguments must be a string") || FailureKind(err) != FailRefused {
		t.Errorf("error %v (kind %s), want a vllm refusal of the arguments", err, FailureKind(err))
	}
	if _, err := m.Record(body(`"{\"city\":\"Paris\"}"`)); err != nil {
		t.Errorf("string arguments: %v", err)
	}
}

// A live request whose line cannot be measured (here a vLLM refusal) was
// still sent: its outcome stays in the performance section, marked
// unmeasured, and out of the ISL tables.
func TestUnmeasuredLiveRequestKeepsItsOutcome(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	line := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none",` +
		`"payload":{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"x"}}]}]},` +
		`"dry_run":false,"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":12,"completion_tokens":3}}}`
	res, err := m.Record([]byte(line))
	if err == nil || FailureKind(err) != FailRefused {
		t.Fatalf("err %v, want a refusal", err)
	}
	if len(res.Requests) != 1 || !res.Requests[0].Unmeasured || res.Requests[0].Live == nil || res.Requests[0].Live.LatencyNs != 900 {
		t.Fatalf("requests %+v, want the live outcome, unmeasured", res.Requests)
	}
	s := report.NewAccumulator()
	s.AddUnreadable(FailureKind(err))
	s.AddRequest(res.Requests[0])
	r := s.Report()
	if r.Requests != 0 || r.Performance == nil || r.Performance.Requests != 1 || r.Performance.Succeeded != 1 {
		t.Errorf("ISL requests %d (want 0), performance %+v (want 1 request, succeeded)", r.Requests, r.Performance)
	}
}

// TestMarkerEndAndHit (#27 item 1): a first request whose server
// reported cached tokens records where its cache-bust marker ends in the
// counted prompt (the prompt's count less that of what the Qwen3 template
// writes after the marker, written out by hand); cached tokens that reach
// it mean the marker was served from a cache, and measure warns. A shared
// system prompt cached before the marker is no hit, and later turns
// (whose history repeats turn 0's marker) are not judged.
func TestMarkerEndAndHit(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	marker := "[rid:8e15353008f0]\n\n"
	content := "Hello, how are you today?"
	msgs := fmt.Sprintf(`[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":%q}]`, marker+content)
	total := templatedCount(t, m, msgs, "")
	end := total - m.opts.Tokenizer.Count(content+"<|im_end|>\n<|im_start|>assistant\n")
	rec := func(turn, cached int) string {
		return fmt.Sprintf(`{"kind":"islkit.request","schema_version":1,"conversation_id":"c%d","turn":%d,"target_isl":%d,"marker":%q,"payload":{"model":"m","messages":%s},"result":{"status":200,"ok":true,"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d,"cached_tokens":%d}}}`,
			cached, turn, total, marker, msgs, total, total+1, cached)
	}
	if isl := islOf(t, m, rec(0, 16)); isl.MarkerEnd == nil || *isl.MarkerEnd != end {
		t.Fatalf("marker_end %v, want %d", deref(isl.MarkerEnd), end)
	}
	if w := m.Warnings(); len(w) != 0 {
		t.Fatalf("a cached system prompt before the marker warns: %q", w)
	}
	if isl := islOf(t, m, rec(1, total-1)); isl.MarkerEnd != nil {
		t.Errorf("turn 1: marker_end %d, want none", *isl.MarkerEnd)
	}
	if w := m.Warnings(); len(w) != 0 {
		t.Fatalf("a later turn's cached history warns: %q", w)
	}
	islOf(t, m, rec(0, end))
	want := fmt.Sprintf("warning: 1 first request(s) found their cache-bust marker already cached (c%d: %d cached, the marker ends at token %d)", end, end, end)
	if w := m.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// A send record sized for another server profile than measure counts
// with (compose --server, copied by send) says so: isl.sized_for, and one
// warning at the end naming both profiles; a record sized for the profile
// measure counts with, or one that does not say, has no sized_for.
func TestSizedForAnotherProfile(t *testing.T) {
	rec := func(server string) string {
		s := ""
		if server != "" {
			s = `"server":"` + server + `",`
		}
		return `{"kind":"islkit.request","schema_version":1,` + s + `"conversation_id":"c","turn":0,"target_isl":12,"marker":"","payload":{"model":"m","messages":[{"role":"user","content":"Call me Ishmael."}]}}`
	}
	m := sharedMeasurer(t, "", Options{ApplyChatTemplate: true, Server: serverprofile.VLLM})
	line := one(t, m, rec("sglang"))
	testutil.ValidateSchema(t, "measurement.schema.json", line)
	if isl := lineISL(t, line); isl.SizedFor != "sglang" || isl.Profile != "vllm" {
		t.Errorf("sized_for %q profile %q, want sglang and vllm", isl.SizedFor, isl.Profile)
	}
	for _, server := range []string{"vllm", ""} {
		if isl := lineISL(t, one(t, m, rec(server))); isl.SizedFor != "" {
			t.Errorf("server %q: sized_for %q", server, isl.SizedFor)
		}
	}
	w := m.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "1 request(s) were sized for --server sglang and are counted as vllm") {
		t.Errorf("warnings %q", w)
	}
}
