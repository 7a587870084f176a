package measure

import (
	"bytes"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
)

// oslResult is what the OSL check reads of a send record's result.
type oslResult struct {
	OK           bool   `json:"ok"`
	FinishReason string `json:"finish_reason"`
	OutputText   string `json:"output_text"`
	Reasoning    string `json:"reasoning_text"`
	Usage        *struct {
		CompletionTokens *int `json:"completion_tokens"`
		ReasoningTokens  *int `json:"reasoning_tokens"`
	} `json:"usage"`
}

// oslOf measures a live request's output against its max_tokens: the
// server's count, the streamed text re-encoded with measure's tokenizer,
// and why it missed; nil when there is no target, no readable result, or
// the request failed before any output.
func (m *Measurer) oslOf(maxTokens int, asked string, result []byte) *records.OSL {
	if maxTokens <= 0 {
		return nil
	}
	var r oslResult
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	o := &records.OSL{Target: maxTokens, Asked: asked, FinishReason: r.FinishReason}
	if r.Usage != nil && r.Usage.CompletionTokens != nil {
		o.Server = r.Usage.CompletionTokens
		o.Reasoning = r.Usage.ReasoningTokens
	}
	if m.opts.Tokenizer != nil && (r.OutputText != "" || r.Reasoning != "") {
		n := m.opts.Tokenizer.Count(r.OutputText) + m.opts.Tokenizer.Count(r.Reasoning)
		o.Reencoded = &n
		if o.Server != nil {
			d := n - *o.Server
			o.ReencodedDiff = &d
		}
	}
	switch {
	case o.Server != nil:
		o.Received, o.ReceivedFrom = *o.Server, "server"
	case o.Reencoded != nil:
		o.Received, o.ReceivedFrom = *o.Reencoded, "reencoded"
	case r.OK:
		o.ReceivedFrom = "server" // an empty answer without usage: 0 received
	default:
		return nil // failed before any output: not an output length
	}
	o.Error = o.Received - o.Target
	o.Cause = oslCause(r.OK, o)
	return o
}

// oslCause is why o missed its target (records.OSLExact when it did not).
func oslCause(ok bool, o *records.OSL) string {
	switch {
	case !ok:
		return records.OSLFailedMidStream
	case o.Error == 0:
		return records.OSLExact
	case o.Error > 0:
		return records.OSLOverTarget
	}
	switch o.FinishReason {
	case "length":
		return records.OSLLengthCut
	case "stop", "eos", "stop_sequence", "end_turn", "":
		// No finish reason (a server that sends none) with fewer tokens
		// than asked: the model stopped on its own.
		return records.OSLStoppedEarly
	}
	return records.OSLOtherFinish
}

// aiperfOSL is the OSL check of an AIPerf raw record: the target is the
// payload's max_tokens (max_completion_tokens, max_output_tokens), the
// output what its raw responses streamed (content and reasoning deltas,
// the last finish reason, the last usage with completion_tokens or
// output_tokens); nil without a target or responses.
func (m *Measurer) aiperfOSL(body, responses, status []byte) *records.OSL {
	var p struct {
		MaxTokens           *int `json:"max_tokens"`
		MaxCompletionTokens *int `json:"max_completion_tokens"`
		MaxOutputTokens     *int `json:"max_output_tokens"`
	}
	if json.Unmarshal(body, &p) != nil {
		return nil
	}
	target := 0
	for _, v := range []*int{p.MaxTokens, p.MaxCompletionTokens, p.MaxOutputTokens} {
		if v != nil {
			target = *v
		}
	}
	var items []json.RawMessage
	if target <= 0 || json.Unmarshal(responses, &items) != nil || len(items) == 0 {
		return nil
	}
	var r oslResult
	var text, reasoning []byte
	var code int
	r.OK = json.Unmarshal(status, &code) != nil || code == 0 || code == 200
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			var obj struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(it, &obj) == nil && obj.Text != nil {
				s = *obj.Text
			} else {
				s = string(it)
			}
		}
		for _, line := range bytes.Split([]byte(s), []byte("\n")) {
			line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
			if len(line) == 0 || line[0] != '{' {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct {
						Content          string `json:"content"`
						ReasoningContent string `json:"reasoning_content"`
						Reasoning        string `json:"reasoning"`
					} `json:"delta"`
					Message struct {
						Content          string `json:"content"`
						ReasoningContent string `json:"reasoning_content"`
					} `json:"message"`
					Text         string `json:"text"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					CompletionTokens *int `json:"completion_tokens"`
					OutputTokens     *int `json:"output_tokens"`
					Details          *struct {
						ReasoningTokens *int `json:"reasoning_tokens"`
					} `json:"completion_tokens_details"`
				} `json:"usage"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &c) != nil {
				continue
			}
			if len(c.Error) > 0 && string(c.Error) != "null" {
				r.OK = false
			}
			for _, ch := range c.Choices {
				text = append(append(append(text, ch.Delta.Content...), ch.Message.Content...), ch.Text...)
				reasoning = append(append(append(reasoning, ch.Delta.ReasoningContent...), ch.Delta.Reasoning...), ch.Message.ReasoningContent...)
				if ch.FinishReason != "" {
					r.FinishReason = ch.FinishReason
				}
			}
			if u := c.Usage; u != nil {
				n := u.CompletionTokens
				if n == nil {
					n = u.OutputTokens
				}
				if n != nil {
					r.Usage = &struct {
						CompletionTokens *int `json:"completion_tokens"`
						ReasoningTokens  *int `json:"reasoning_tokens"`
					}{CompletionTokens: n}
					if u.Details != nil {
						r.Usage.ReasoningTokens = u.Details.ReasoningTokens
					}
				}
			}
		}
	}
	r.OutputText, r.Reasoning = string(text), string(reasoning)
	result, err := json.Marshal(r)
	if err != nil {
		return nil
	}
	return m.oslOf(target, "", result)
}
