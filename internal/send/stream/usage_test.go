package stream

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// TestUsageWithoutPromptTokensRecordedAsAbsent: a server's usage without
// prompt_tokens is recorded without it, not as a count of 0 that measure
// would read as the server's ISL (issue 11, item 11).
func TestUsageWithoutPromptTokensRecordedAsAbsent(t *testing.T) {
	in := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"completion_tokens\":3,\"total_tokens\":3}}\n\n" +
		"data: [DONE]\n\n"
	var res records.Result
	if err := ReadChat(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Usage)
	if res.Usage == nil || res.Usage.CompletionTokens != 3 || strings.Contains(string(b), "prompt_tokens") {
		t.Errorf("usage %s, want completion tokens and no prompt_tokens", b)
	}
}

// TestUsageWithoutTotalTokensRecordedAsAbsent: usage without total_tokens
// is recorded without it, not as 0 (issue 27 item 18); a record written
// before, with total_tokens 0, still reads.
func TestUsageWithoutTotalTokensRecordedAsAbsent(t *testing.T) {
	in := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\n" +
		"data: [DONE]\n\n"
	var res records.Result
	if err := ReadChat(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Usage)
	if res.Usage == nil || res.Usage.TotalTokens != nil || strings.Contains(string(b), "total_tokens") {
		t.Errorf("usage %s, want no total_tokens", b)
	}
	var old records.Usage
	if err := json.Unmarshal([]byte(`{"prompt_tokens":5,"completion_tokens":3,"total_tokens":0}`), &old); err != nil || old.TotalTokens == nil || *old.TotalTokens != 0 {
		t.Errorf("an old record's usage: %+v %v", old, err)
	}
}

// TestUsageFloatTokens: a token count written as a number with no
// fraction (12.0) is read as that count; one with a fraction (12.5) is a
// protocol error that says what the server sent, in a stream or a body,
// on chat and on Responses, not the JSON decoder's words about Go struct
// fields (issue 27 item 18).
func TestUsageFloatTokens(t *testing.T) {
	chunk := func(prompt string) string {
		return "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":1,\"total_tokens\":13}}\n\n" +
			"data: [DONE]\n\n"
	}
	var res records.Result
	if err := ReadChat(strings.NewReader(chunk("12.0")), time.Now(), &res); err != nil || *res.Usage.PromptTokens != 12 {
		t.Errorf("12.0: %v %+v", err, res.Usage)
	}
	for name, read := range map[string]func() error{
		"chat stream": func() error { return ReadChat(strings.NewReader(chunk("12.5")), time.Now(), &records.Result{}) },
		"chat body": func() error {
			return ReadChatJSON([]byte(`{"choices":[{"message":{"content":"Hi"}}],"usage":{"prompt_tokens":12.5,"completion_tokens":1}}`), time.Now(), time.Now(), &records.Result{})
		},
		"responses body": func() error {
			return ReadResponsesJSON([]byte(`{"object":"response","status":"completed","output":[],"usage":{"input_tokens":12.5,"output_tokens":1}}`), time.Now(), time.Now(), &records.Result{})
		},
	} {
		err := read()
		_, pe := errors.AsType[*ProtocolError](err)
		if err == nil || !pe || !strings.Contains(err.Error(), "usage: a token count is 12.5, not a whole number") || strings.Contains(err.Error(), "Go") {
			t.Errorf("%s: %v, want a protocol error naming 12.5", name, err)
		}
	}
}
