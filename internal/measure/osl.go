package measure

import (
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
