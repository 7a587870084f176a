package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

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
	if err := ReadResponses(strings.NewReader(responsesStream), time.Now(), &res); err != nil {
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
	if err := ReadResponses(strings.NewReader(responsesStream+"data: [DONE]\n\n"), time.Now(), &r2); err != nil {
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
		if err := ReadResponses(strings.NewReader(bad), time.Now(), &res); !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrNoTerminal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	incomplete := cut + `data: {"type":"response.incomplete","response":{"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":12,"output_tokens":2,"total_tokens":14}}}` + "\n\n"
	var r3 records.Result
	if err := ReadResponses(strings.NewReader(incomplete), time.Now(), &r3); err != nil || r3.FinishReason != "length" || *r3.Usage.PromptTokens != 12 {
		t.Errorf("incomplete: %v %+v", err, r3)
	}
	var se *ServerError
	for _, bad := range []string{
		`data: {"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":3}` + "\n\n",
		`data: {"type":"response.failed","response":{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"}}}` + "\n\n",
	} {
		var res records.Result
		if err := ReadResponses(strings.NewReader(bad), time.Now(), &res); !errors.As(err, &se) || se.Message != "boom" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var pe *ProtocolError
	var r4 records.Result
	if err := ReadResponses(strings.NewReader("data: nope\n\n"), time.Now(), &r4); !errors.As(err, &pe) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestReadResponsesJSON(t *testing.T) {
	body := `{"id":"resp_1","object":"response","status":"completed","output":[` +
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"sum"}]},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hel"},{"type":"output_text","text":"lo"}]}],` +
		`"usage":{"input_tokens":7,"output_tokens":2,"total_tokens":9,"input_tokens_details":{"cached_tokens":0}}}`
	var res records.Result
	if err := ReadResponsesJSON([]byte(body), time.Now(), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OutputText != "Hello" || res.Reasoning != "sum" || res.FinishReason != "stop" || res.TTFTNs != nil ||
		*res.Usage.PromptTokens != 7 || res.Usage.CompletionTokens != 2 || *res.Usage.CachedTokens != 0 {
		t.Errorf("%+v usage %+v", res, res.Usage)
	}
	var se *ServerError
	if err := ReadResponsesJSON([]byte(`{"error":{"message":"boom","type":"BadRequestError","code":400}}`), time.Now(), time.Now(), &res); !errors.As(err, &se) || se.Code != "400" {
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
	if err := ReadChat(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OutputText != "Hello" || res.FinishReason != "length" || len(res.ITLNs) != 1 || *res.Usage.PromptTokens != 9 {
		t.Errorf("%+v", res)
	}
	var r2 records.Result
	body := `{"object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`
	if err := ReadChatJSON([]byte(body), time.Now(), time.Now(), &r2); err != nil || r2.OutputText != "Hi" || r2.TTFTNs != nil {
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
		err := ReadResponses(strings.NewReader(string(data)), time.Now(), &res)
		if err == nil && !strings.Contains(string(data), "response.") {
			t.Errorf("success without a terminal event")
		}
		if errors.Is(err, ErrTruncated) != errors.Is(err, ErrNoTerminal) {
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
		_ = ReadResponsesJSON(data, time.Now(), time.Now(), &r2)
	})
}
