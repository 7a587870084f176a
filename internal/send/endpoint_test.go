package send

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
)

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
