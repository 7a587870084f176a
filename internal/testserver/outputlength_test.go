package testserver

import (
	"encoding/json"
	"strings"
	"testing"
)

type lengthReply struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		}
	}
	Usage struct {
		CompletionTokens int `json:"completion_tokens"`
		Details          *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
}

// TestOutputServers: each server honours its own output-length parameters
// and ignores the others', as the real one does (NaturalLength 5 is where
// the model would stop): llama.cpp's n_predict is its length and it has no
// minimum; a hosted API (openai) honours none; the server's own record
// (StopOf) says why each reply stopped.
func TestOutputServers(t *testing.T) {
	for _, c := range []struct {
		server, extra string
		tokens        int
		finish, why   string
	}{
		{"vllm", `"max_tokens":9,"ignore_eos":true,"min_tokens":9`, 9, "length", StopMaxTokens},
		{"vllm", `"max_tokens":9`, 5, "stop", StopEOS},
		{"sglang", `"max_tokens":9,"min_tokens":7`, 7, "stop", StopEOS},
		{"trtllm", `"max_tokens":9,"ignore_eos":true`, 9, "length", StopMaxTokens},
		{"dynamo", `"max_tokens":9,"ignore_eos":true,"min_tokens":9`, 9, "length", StopMaxTokens},
		{"llamacpp", `"max_tokens":20,"n_predict":9,"ignore_eos":true`, 9, "length", StopMaxTokens},
		{"llamacpp", `"max_tokens":9,"min_tokens":9`, 5, "stop", StopEOS}, // no minimum
		{"openai", `"max_tokens":9,"ignore_eos":true,"min_tokens":9`, 5, "stop", StopEOS},
	} {
		s := StartTest(t, Config{NoTokenize: true, NaturalLength: 5, OutputServer: c.server})
		body := `{"model":"m","messages":[{"role":"user","content":"x"}],` + c.extra + `}`
		var r lengthReply
		postJSON(t, s.URL(), body, nil, &r)
		stop, ok := s.StopOf([]byte(body))
		if r.Usage.CompletionTokens != c.tokens || r.Choices[0].FinishReason != c.finish || !ok || stop.Why != c.why || stop.Tokens != c.tokens {
			t.Errorf("%s %s: %d tokens %q, stop %+v; want %d %q %s", c.server, c.extra, r.Usage.CompletionTokens, r.Choices[0].FinishReason, stop, c.tokens, c.finish, c.why)
		}
	}
}

// TestResponsesIgnoreLengthParams: on /v1/responses the server stops
// where the model would whatever ignore_eos and min_tokens say, as vLLM's
// Responses endpoint (which passes neither to its sampler) does.
func TestResponsesIgnoreLengthParams(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true, NaturalLength: 5})
	body := `{"model":"m","input":"x","max_output_tokens":9,"ignore_eos":true,"min_tokens":9}`
	var r struct {
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	if code, out := post(t, s, PathResponses, body, nil); code != 200 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("%d %s", code, out)
	}
	if stop, _ := s.StopOf([]byte(body)); r.Usage.OutputTokens != 5 || stop.Why != StopEOS {
		t.Errorf("%d output tokens, stop %+v; want 5 eos", r.Usage.OutputTokens, stop)
	}
}

// TestIgnoreMinTokensFault: the fault makes the server stop where the model
// would, whatever ignore_eos and min_tokens ask, and its record says so.
func TestIgnoreMinTokensFault(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true, NaturalLength: 5, FaultRate: 1, Faults: []string{FaultIgnoreMinTokens}})
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":9,"ignore_eos":true,"min_tokens":9}`
	var r lengthReply
	postJSON(t, s.URL(), body, nil, &r)
	stop, _ := s.StopOf([]byte(body))
	if r.Usage.CompletionTokens != 5 || r.Choices[0].FinishReason != "stop" || stop.Why != StopIgnoredMinTokens {
		t.Errorf("%d tokens %q, stop %+v; want 5 stop ignored_min_tokens", r.Usage.CompletionTokens, r.Choices[0].FinishReason, stop)
	}
	if err := (Config{Faults: []string{FaultIgnoreMinTokens}}).Validate(); err != nil {
		t.Errorf("fault refused: %v", err)
	}
	for _, k := range FaultKinds() {
		if k == FaultIgnoreMinTokens {
			t.Error("ignore_min_tokens is drawn by a fault rate without -faults: it would change every seeded run")
		}
	}
}

// TestReasoningTokens: with Reasoning, the first tokens of a chat reply are
// reasoning, inside completion_tokens and reported in its details,
// streamed or not.
func TestReasoningTokens(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true, Reasoning: 3})
	var r lengthReply
	postJSON(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":8}`, nil, &r)
	// words 0..2 are "lorem ipsum dolor", 3..7 " sit amet, consectetur adipiscing"
	if r.Usage.CompletionTokens != 8 || r.Usage.Details == nil || r.Usage.Details.ReasoningTokens != 3 ||
		r.Choices[0].Message.ReasoningContent != "lorem ipsum dolor" || r.Choices[0].Message.Content != " sit amet, consectetur adipiscing" {
		t.Errorf("reply %+v", r)
	}
	_, body := postJSON(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`, nil, nil)
	if strings.Count(body, `"reasoning_content":`) != 3 || !strings.Contains(body, `"completion_tokens_details":{"reasoning_tokens":3}`) {
		t.Errorf("stream:\n%s", body)
	}
}
