package send

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
)

// A streamed Responses answer as OpenAI documents its events (each event
// is one SSE event with an "event:" line and its JSON data).
const responsesStream = "event: response.created\n" +
	`data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}` + "\n\n" +
	"event: response.in_progress\n" +
	`data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"in_progress"}}` + "\n\n" +
	`data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}` + "\n\n" +
	`data: {"type":"response.reasoning_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"think"}` + "\n\n" +
	"event: response.output_text.delta\n" +
	`data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}` + "\n\n" +
	`data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo"}` + "\r\n\r\n" +
	`data: {"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello"}` + "\n\n" +
	"event: response.completed\n" +
	`data: {"type":"response.completed","sequence_number":7,"response":{"id":"resp_1","object":"response","status":"completed",` +
	`"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}],` +
	`"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":8},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":15}}}` + "\n\n"

func TestReadResponsesStream(t *testing.T) {
	var res records.Result
	if err := readResponsesStream(strings.NewReader(responsesStream), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	// The done event's full text is not output again: only deltas count.
	if res.OutputText != "Hello" || res.Reasoning != "think" || res.FinishReason != "stop" || res.Chunks != 8 ||
		res.TTFTNs == nil || len(res.ITLNs) != 2 || u == nil || u.PromptTokens == nil || *u.PromptTokens != 12 ||
		u.CompletionTokens != 3 || u.TotalTokens == nil || *u.TotalTokens != 15 || *u.CachedTokens != 8 || *u.ReasoningTokens != 1 {
		t.Errorf("%+v usage %+v", res, u)
	}
	// A [DONE] after the terminal event is never read; one before it, or
	// the end of the stream, is a truncation.
	var r2 records.Result
	if err := readResponsesStream(strings.NewReader(responsesStream+"data: [DONE]\n\n"), time.Now(), &r2); err != nil {
		t.Errorf("[DONE] after response.completed: %v", err)
	}
	cut := responsesStream[:strings.Index(responsesStream, "event: response.completed")]
	for name, bad := range map[string]string{
		"no terminal":   cut,
		"DONE early":    cut + "data: [DONE]\n\n",
		"mid-event":     cut + `data: {"type":"response.comp`,
		"empty body":    "",
		"only created":  "data: {\"type\":\"response.created\",\"response\":{}}\n\n",
		"keep-alive(s)": ": ping\n\n",
	} {
		var res records.Result
		if err := readResponsesStream(strings.NewReader(bad), time.Now(), &res); !errors.Is(err, errTruncated) || !errors.Is(err, errNoTerminal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	incomplete := cut + `data: {"type":"response.incomplete","response":{"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":12,"output_tokens":2,"total_tokens":14}}}` + "\n\n"
	var r3 records.Result
	if err := readResponsesStream(strings.NewReader(incomplete), time.Now(), &r3); err != nil || r3.FinishReason != "length" || *r3.Usage.PromptTokens != 12 {
		t.Errorf("incomplete: %v %+v", err, r3)
	}
	var se *serverError
	for _, bad := range []string{
		`data: {"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":3}` + "\n\n",
		`data: {"type":"response.failed","response":{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"}}}` + "\n\n",
	} {
		var res records.Result
		if err := readResponsesStream(strings.NewReader(bad), time.Now(), &res); !errors.As(err, &se) || se.message != "boom" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var pe *protocolError
	var r4 records.Result
	if err := readResponsesStream(strings.NewReader("data: nope\n\n"), time.Now(), &r4); !errors.As(err, &pe) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestReadResponsesJSON(t *testing.T) {
	body := `{"id":"resp_1","object":"response","status":"completed","output":[` +
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"sum"}]},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hel"},{"type":"output_text","text":"lo"}]}],` +
		`"usage":{"input_tokens":7,"output_tokens":2,"total_tokens":9,"input_tokens_details":{"cached_tokens":0}}}`
	var res records.Result
	if err := readResponsesJSON([]byte(body), time.Now(), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OutputText != "Hello" || res.Reasoning != "sum" || res.FinishReason != "stop" || res.TTFTNs != nil ||
		*res.Usage.PromptTokens != 7 || res.Usage.CompletionTokens != 2 || *res.Usage.CachedTokens != 0 {
		t.Errorf("%+v usage %+v", res, res.Usage)
	}
	var se *serverError
	if err := readResponsesJSON([]byte(`{"error":{"message":"boom","type":"BadRequestError","code":400}}`), time.Now(), time.Now(), &res); !errors.As(err, &se) || se.code != "400" {
		t.Errorf("error body: %v", err)
	}
}

// A completions stream carries its text in choices[0].text and usage in
// a final chunk with no choices (server-preprocessing.md §4).
func TestReadCompletionsStream(t *testing.T) {
	in := `data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Hel","logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"lo","logprobs":null,"finish_reason":"length"}]}` + "\n\n" +
		`data: {"id":"cmpl-1","object":"text_completion","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}` + "\n\n" +
		"data: [DONE]\n\n"
	var res records.Result
	if err := readStream(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OutputText != "Hello" || res.FinishReason != "length" || len(res.ITLNs) != 1 || *res.Usage.PromptTokens != 9 {
		t.Errorf("%+v", res)
	}
	var r2 records.Result
	body := `{"object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`
	if err := readJSON([]byte(body), time.Now(), time.Now(), &r2); err != nil || r2.OutputText != "Hi" || r2.TTFTNs != nil {
		t.Errorf("%v %+v", err, r2)
	}
}

func FuzzReadResponsesStream(f *testing.F) {
	f.Add([]byte(responsesStream))
	f.Add([]byte(responsesStream + "data: [DONE]\n\n"))
	f.Add([]byte(`data: {"type":"response.output_text.delta","delta":{"content":"x"}}` + "\n\n"))
	f.Add([]byte(`data: {"type":"response.completed","response":null}` + "\n\n"))
	f.Add([]byte(`data: {"type":"error","code":500,"message":"m"}` + "\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res records.Result
		err := readResponsesStream(strings.NewReader(string(data)), time.Now(), &res)
		if err == nil && !strings.Contains(string(data), "response.") {
			t.Errorf("success without a terminal event")
		}
		if errors.Is(err, errTruncated) != errors.Is(err, errNoTerminal) {
			t.Errorf("truncation without its cause: %v", err)
		}
		if res.TTFTNs == nil && len(res.ITLNs) > 0 {
			t.Errorf("ITL without TTFT")
		}
		if !res.Stream {
			t.Errorf("a stream not marked as one")
		}
		// The output is the deltas, in order: no more than the input holds.
		if len(res.OutputText)+len(res.Reasoning) > len(data) {
			t.Errorf("output %d bytes from %d bytes of input", len(res.OutputText)+len(res.Reasoning), len(data))
		}
		var r2 records.Result
		_ = readResponsesJSON(data, time.Now(), time.Now(), &r2)
	})
}

func buildBody(t *testing.T, c records.Conversation, turn int, replies []string, stream bool) map[string]any {
	t.Helper()
	b, err := NewBuilder(PayloadOptions{Stream: stream, ExtraBody: `{"ignore_eos":true}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	built, err := b.Build(&c, turn, 0, replies)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(built.Body, &m); err != nil {
		t.Fatalf("%s: %v", built.Body, err)
	}
	return m
}

func TestCompletionsBody(t *testing.T) {
	for _, tc := range []struct {
		target cachebust.Target
		want   string
	}{
		{cachebust.None, "P"},
		{cachebust.FirstTurnPrefix, "[rid:eb232ceb3496]\n\nP"},
		{cachebust.FirstTurnSuffix, "P\n\n[rid:eb232ceb3496]"},
		{cachebust.SystemPrefix, "[rid:eb232ceb3496]\n\nP"}, // the system target falls back to the prompt
		{cachebust.SystemSuffix, "P\n\n[rid:eb232ceb3496]"},
	} {
		c := conv("trace_a", 0, tc.target, "", "P")
		c.Endpoint = endpoint.Completions
		m := buildBody(t, c, 0, nil, true)
		if m["prompt"] != tc.want || m["max_tokens"] != 4.0 || m["model"] != "test-model" || m["stream"] != true ||
			m["ignore_eos"] != true || m["messages"] != nil || len(m) != 6 {
			t.Errorf("%s: %v", tc.target, m)
		}
		if so, _ := m["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("%s: stream_options %v", tc.target, m["stream_options"])
		}
	}
	c := conv("c", 0, cachebust.None, "", "P", "Q")
	c.Endpoint = endpoint.Completions
	b, _ := NewBuilder(PayloadOptions{}, nil)
	if _, err := b.Build(&c, 1, 0, nil); err == nil {
		t.Error("a second completions turn built")
	}
}

func TestResponsesBody(t *testing.T) {
	c := conv("trace_a", 0, cachebust.SystemSuffix, "S", "U0", "U1")
	c.Endpoint = endpoint.Responses
	m := buildBody(t, c, 1, []string{"real reply"}, false)
	items, _ := json.Marshal(m["input"])
	want := `[{"content":"U0","role":"user","type":"message"},{"content":"real reply","role":"assistant","type":"message"},{"content":"U1","role":"user","type":"message"}]`
	if m["instructions"] != "S\n\n[rid:eb232ceb3496]" || string(items) != want || m["max_output_tokens"] != 5.0 ||
		m["stream"] != false || m["max_tokens"] != nil || m["stream_options"] != nil || len(m) != 6 {
		t.Errorf("%v\ninput %s", m, items)
	}
	// Without a system prompt there are no instructions, and a system
	// target falls back to the first user item; a dry run's history is
	// compose's reply.
	c = conv("trace_a", 0, cachebust.SystemPrefix, "", "U0", "U1")
	c.Endpoint = endpoint.Responses
	m = buildBody(t, c, 1, nil, true)
	items, _ = json.Marshal(m["input"])
	want = `[{"content":"[rid:eb232ceb3496]\n\nU0","role":"user","type":"message"},{"content":"reply 0","role":"assistant","type":"message"},{"content":"U1","role":"user","type":"message"}]`
	if _, ok := m["instructions"]; ok || string(items) != want || m["stream_options"] != nil {
		t.Errorf("%v\ninput %s", m, items)
	}
}

func TestCheckEndpoint(t *testing.T) {
	chat := conv("a", 0, cachebust.None, "", "x")
	resp := conv("b", 1, cachebust.None, "", "x")
	resp.Endpoint = endpoint.Responses
	if k, err := CheckEndpoint([]records.Conversation{chat}, ""); err != nil || k != endpoint.Chat {
		t.Errorf("old record: %s %v", k, err)
	}
	if k, err := CheckEndpoint([]records.Conversation{resp}, endpoint.Responses); err != nil || k != endpoint.Responses {
		t.Errorf("matching: %s %v", k, err)
	}
	if _, err := CheckEndpoint([]records.Conversation{resp}, endpoint.Chat); err == nil || !strings.Contains(err.Error(), "composed for --endpoint responses, not chat") {
		t.Errorf("mismatch: %v", err)
	}
	if _, err := CheckEndpoint([]records.Conversation{chat, resp}, ""); err == nil || !strings.Contains(err.Error(), "one run sends to one endpoint") {
		t.Errorf("mixed: %v", err)
	}
}

// AIPerf's inputs.json for the other endpoints: each payload in the
// shape its CompletionsEndpoint and ResponsesEndpoint format_payload
// write (prompt as a list of strings; instructions, input message items
// and max_output_tokens), history included.
func TestAIPerfInputsEndpoints(t *testing.T) {
	cmpl := conv("s0", 0, cachebust.FirstTurnSuffix, "", "P")
	cmpl.Endpoint = endpoint.Completions
	resp := conv("s1", 1, cachebust.SystemPrefix, "S", "U0", "U1")
	resp.Endpoint = endpoint.Responses
	type doc struct {
		Data []struct {
			SessionID string           `json:"session_id"`
			Payloads  []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	read := func(c records.Conversation, want int) doc {
		var out bytes.Buffer
		n, err := DryRun(&out, []records.Conversation{c}, newBuilder(t, PayloadOptions{Stream: true}), Shard{}, FormatAIPerfInputs)
		if err != nil || n != want {
			t.Fatalf("n %d, err %v", n, err)
		}
		var d doc
		if err := json.Unmarshal(out.Bytes(), &d); err != nil || len(d.Data) != 1 || len(d.Data[0].Payloads) != want {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return d
	}
	p := read(cmpl, 1).Data[0].Payloads[0]
	prompt, _ := json.Marshal(p["prompt"])
	marker := cachebust.Marker(cachebust.FirstTurnSuffix, "bench", 0, 0, "s0")
	if want, _ := json.Marshal([]string{"P" + marker}); string(prompt) != string(want) || p["max_tokens"] != 4.0 || p["model"] != "test-model" || p["stream"] != true {
		t.Errorf("completions payload %v", p)
	}
	d := read(resp, 2)
	p = d.Data[0].Payloads[1]
	items, _ := json.Marshal(p["input"])
	marker = cachebust.Marker(cachebust.SystemPrefix, "bench", 0, 1, "s1")
	want := `[{"content":"U0","role":"user","type":"message"},{"content":"reply 0","role":"assistant","type":"message"},{"content":"U1","role":"user","type":"message"}]`
	if d.Data[0].SessionID != "s1" || p["instructions"] != marker+"S" || string(items) != want || p["max_output_tokens"] != 5.0 || p["messages"] != nil {
		t.Errorf("responses payload %v\n%s", p, items)
	}
}
