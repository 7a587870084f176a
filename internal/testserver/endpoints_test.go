package testserver

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// post sends body to path and returns the status and the response text.
func post(t *testing.T, s *Server, path, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}

// sseEvents splits an event stream into its (event, data) pairs.
func sseEvents(t *testing.T, text string) (events, data []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			events = append(events, ev)
			data = append(data, strings.TrimPrefix(line, "data: "))
			ev = ""
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return events, data
}

// Token-id prompts count their length (vLLM takes them as given, §2),
// and a list of prompts is the sum, whatever the tokenizer: a count that
// needs no reference tokenizer.
func TestCompletionsTokenIDs(t *testing.T) {
	s := StartTest(t, Config{})
	for body, want := range map[string]int{
		`{"model":"m","prompt":[1,2,3,4,5],"max_tokens":2}`:          5,
		`{"model":"m","prompt":[[1,2],[3,4,5,6],[]],"max_tokens":2}`: 6,
	} {
		status, text := post(t, s, PathCompletions, body, nil)
		var resp struct {
			Object  string `json:"object"`
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
				TotalTokens      int `json:"total_tokens"`
			} `json:"usage"`
		}
		if status != 200 || json.Unmarshal([]byte(text), &resp) != nil {
			t.Fatalf("%s: %d %s", body, status, text)
		}
		if resp.Object != "text_completion" || len(resp.Choices) != 1 || resp.Choices[0].Text != "lorem ipsum" || resp.Choices[0].FinishReason != "length" {
			t.Errorf("%s: %s", body, text)
		}
		if resp.Usage.PromptTokens != want || resp.Usage.CompletionTokens != 2 || resp.Usage.TotalTokens != want+2 {
			t.Errorf("%s: usage %+v, want prompt_tokens %d", body, resp.Usage, want)
		}
	}
}

// The completions stream: one chunk per token with choices[0].text, the
// finish chunk, the usage chunk (choices []) when stream_options asks,
// then [DONE].
func TestCompletionsStream(t *testing.T) {
	s := StartTest(t, Config{})
	for _, withUsage := range []bool{true, false} {
		body := `{"model":"m","prompt":[7,8,9],"max_tokens":3,"stream":true`
		if withUsage {
			body += `,"stream_options":{"include_usage":true}`
		}
		status, text := post(t, s, PathCompletions, body+"}", nil)
		if status != 200 {
			t.Fatalf("%d %s", status, text)
		}
		_, data := sseEvents(t, text)
		if data[len(data)-1] != "[DONE]" {
			t.Fatalf("stream does not end with [DONE]: %s", text)
		}
		var got strings.Builder
		usage := -1
		for _, d := range data[:len(data)-1] {
			var c struct {
				Object  string `json:"object"`
				Choices []struct {
					Text         string  `json:"text"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "text_completion" {
				t.Fatalf("chunk %s: %v", d, err)
			}
			if c.Usage != nil {
				if len(c.Choices) != 0 {
					t.Errorf("usage chunk has choices: %s", d)
				}
				usage = c.Usage.PromptTokens
				continue
			}
			got.WriteString(c.Choices[0].Text)
		}
		if got.String() != "lorem ipsum dolor" {
			t.Errorf("streamed text %q", got.String())
		}
		if withUsage && usage != 3 || !withUsage && usage != -1 {
			t.Errorf("include_usage %v: usage prompt_tokens %d", withUsage, usage)
		}
	}
}

// A Responses body: the Responses object with one output message item
// (output_text content) and usage.input_tokens / output_tokens /
// total_tokens / input_tokens_details.cached_tokens; streamed, the event
// sequence of vLLM's simple streaming (response.created ...
// response.output_text.delta per token ... response.completed with the
// whole response and its usage), sequence numbers counting from 0, no
// [DONE].
func TestResponsesShape(t *testing.T) {
	s := StartTest(t, Config{PrefixCacheBlock: 4})
	body := `{"model":"m","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Hello there, how are you today?"}]}],"max_output_tokens":3`
	type usage struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		TotalTokens        int `json:"total_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	}
	type response struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage *usage `json:"usage"`
	}
	status, text := post(t, s, PathResponses, body+"}", nil)
	var r response
	if status != 200 || json.Unmarshal([]byte(text), &r) != nil {
		t.Fatalf("%d %s", status, text)
	}
	if r.Object != "response" || r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Type != "message" || r.Output[0].Role != "assistant" ||
		len(r.Output[0].Content) != 1 || r.Output[0].Content[0].Type != "output_text" || r.Output[0].Content[0].Text != "lorem ipsum dolor" {
		t.Errorf("response %s", text)
	}
	prompt, err := s.CountBody([]byte(body + "}"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage == nil || r.Usage.InputTokens != prompt || r.Usage.OutputTokens != 3 || r.Usage.TotalTokens != prompt+3 || r.Usage.InputTokensDetails.CachedTokens != 0 {
		t.Errorf("usage %+v, want input_tokens %d", r.Usage, prompt)
	}

	status, text = post(t, s, PathResponses, body+`,"stream":true}`, nil)
	if status != 200 {
		t.Fatalf("%d %s", status, text)
	}
	events, data := sseEvents(t, text)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Fatalf("events %q\nwant %q", events, want)
	}
	var deltas strings.Builder
	for i, d := range data {
		var e struct {
			Type     string    `json:"type"`
			Seq      int       `json:"sequence_number"`
			Delta    string    `json:"delta"`
			Response *response `json:"response"`
		}
		if err := json.Unmarshal([]byte(d), &e); err != nil || e.Type != events[i] || e.Seq != i {
			t.Fatalf("event %d %s: %v", i, d, err)
		}
		deltas.WriteString(e.Delta)
		if e.Type == "response.completed" {
			u := e.Response.Usage
			// The same prompt again: its full blocks are in the cache now.
			if u == nil || u.InputTokens != prompt || u.OutputTokens != 3 || u.InputTokensDetails.CachedTokens != (prompt-1)/4*4 {
				t.Errorf("completed usage %+v, want input_tokens %d cached %d", u, prompt, (prompt-1)/4*4)
			}
			if e.Response.Status != "completed" || e.Response.Output[0].Content[0].Text != "lorem ipsum dolor" {
				t.Errorf("completed response %s", d)
			}
		}
		if e.Type == "response.created" && (e.Response == nil || e.Response.Usage != nil || e.Response.Status != "in_progress") {
			t.Errorf("created event %s", d)
		}
	}
	if deltas.String() != "lorem ipsum dolor" {
		t.Errorf("deltas %q", deltas.String())
	}
}

// Each endpoint refuses the others' bodies, and faults apply to all.
func TestEndpointsRefuseAndFault(t *testing.T) {
	s := StartTest(t, Config{})
	for path, body := range map[string]string{
		PathCompletions: `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		PathResponses:   `{"model":"m","prompt":"x"}`,
		PathChat:        `{"model":"m","input":"x"}`,
	} {
		if status, text := post(t, s, path, body, nil); status != 400 || !strings.Contains(text, "is required") {
			t.Errorf("%s %s: %d %s", path, body, status, text)
		}
	}
	for _, path := range []string{PathCompletions, PathResponses} {
		body := `{"model":"m","prompt":"x","input":"x","max_tokens":4,"max_output_tokens":4}`
		if status, _ := post(t, s, path, body, map[string]string{FaultHeader: Fault429}); status != 429 {
			t.Errorf("%s 429 fault: status %d", path, status)
		}
		if status, _ := post(t, s, path, body, map[string]string{FaultHeader: FaultReset}); status != 0 {
			t.Errorf("%s reset fault: status %d", path, status)
		}
		streamBody := strings.TrimSuffix(body, "}") + `,"stream":true}`
		status, text := post(t, s, path, streamBody, map[string]string{FaultHeader: FaultTruncate})
		if status == 200 && (strings.Contains(text, "[DONE]") || strings.Contains(text, "response.completed")) {
			t.Errorf("%s truncate fault: the stream ended whole: %s", path, text)
		}
	}
}

// The default model (Qwen3) adds no special tokens: a completions text
// prompt is then the plain encoding, and the sum over a list.
func TestCompletionsTextPrompts(t *testing.T) {
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	if tok.NumSpecialTokensToAdd(false) != 0 {
		t.Fatal("the default model adds special tokens; this test assumes it does not")
	}
	s := StartTest(t, Config{})
	a, b := "Call me Ishmael.", "Some years ago"
	var resp struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	_, text := post(t, s, PathCompletions, `{"model":"m","prompt":["`+a+`","`+b+`"],"max_tokens":1}`, nil)
	if err := json.Unmarshal([]byte(text), &resp); err != nil {
		t.Fatal(err)
	}
	if want := len(tok.Encode(a)) + len(tok.Encode(b)); resp.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens %d, want %d", resp.Usage.PromptTokens, want)
	}
}

// TestEndpointsReferenceOverHTTP: over HTTP, /v1/completions and
// /v1/responses report the usage the independent reference counts
// (internal/measure/testdata/endpoints, from
// scripts/check-endpoints-reference.sh: vLLM's rules written from the
// reference document, Python Jinja2, the Rust tokenizers) for every
// reference model, streamed (every other body) or not; where the
// reference's template raised, the server answers 400.
func TestEndpointsReferenceOverHTTP(t *testing.T) {
	td := filepath.Join("..", "measure", "testdata", "endpoints")
	type bodyCase struct {
		Case string          `json:"case"`
		ISL  int             `json:"isl"`
		Body json.RawMessage `json:"body"`
	}
	type ref struct {
		Model string `json:"model"`
		Count *int   `json:"count"`
	}
	cases := testutil.ReadJSONL[bodyCase](t, filepath.Join(td, "bodies.jsonl.gz"))
	refs := map[string][]ref{}
	for _, r := range testutil.ReadJSONL[ref](t, filepath.Join(td, "reference.jsonl.gz")) {
		refs[r.Model] = append(refs[r.Model], r)
	}
	checked := 0
	for _, model := range testutil.RefModels(t) {
		if len(refs[model]) != len(cases) {
			t.Fatalf("%s: %d reference lines for %d bodies", model, len(refs[model]), len(cases))
		}
		s := StartTest(t, Config{Model: testmodel.Source(t, model), Now: testutil.WireNow})
		for i, c := range cases {
			name := fmt.Sprintf("%s %s/%d", model, c.Case, c.ISL)
			path, field := PathCompletions, "prompt_tokens"
			if strings.HasPrefix(c.Case, "responses") {
				path, field = PathResponses, "input_tokens"
			}
			body := string(c.Body)
			stream := i%2 == 1
			if stream {
				body = strings.TrimSuffix(body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
			}
			status, text := post(t, s, path, body, nil)
			want := refs[model][i].Count
			if want == nil {
				if status != 400 {
					t.Errorf("%s: the reference's template raised; status %d", name, status)
				}
				continue
			}
			if status != 200 {
				t.Errorf("%s: %d %s", name, status, text)
				continue
			}
			got := -1
			if stream {
				_, data := sseEvents(t, text)
				for _, d := range data {
					var e struct {
						Usage    map[string]any `json:"usage"`
						Response struct {
							Usage map[string]any `json:"usage"`
						} `json:"response"`
					}
					if json.Unmarshal([]byte(d), &e) != nil {
						continue
					}
					for _, u := range []map[string]any{e.Usage, e.Response.Usage} {
						if v, ok := u[field].(float64); ok {
							got = int(v)
						}
					}
				}
			} else {
				var r struct {
					Usage map[string]any `json:"usage"`
				}
				if err := json.Unmarshal([]byte(text), &r); err == nil {
					if v, ok := r.Usage[field].(float64); ok {
						got = int(v)
					}
				}
			}
			if got != *want {
				t.Errorf("%s: usage.%s %d, reference %d", name, field, got, *want)
			}
			checked++
		}
	}
	if checked < 180 {
		t.Errorf("only %d bodies checked", checked)
	}
}
