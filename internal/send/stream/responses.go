package stream

import (
	"errors"
	"fmt"
	"io"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
)

// The OpenAI Responses API (/v1/responses) answers with a "response"
// object, or, streamed, with typed events, each one SSE event whose data
// is {"type": ..., ...}: response.created, response.in_progress,
// response.output_item.added, response.content_part.added,
// response.output_text.delta {"delta"} (one per piece of text),
// response.output_text.done, ..., and one terminal event:
// response.completed, response.incomplete or response.failed, each
// carrying the whole response (usage included), or an "error" event.
// OpenAI ends the stream after the terminal event; a "data: [DONE]" that
// some servers add is accepted.

// ErrNoTerminal marks a Responses stream that ended before its terminal
// event.
var ErrNoTerminal = errors.New("stream ended before response.completed")

// responseEvent is the part of a Responses stream event send reads.
type responseEvent struct {
	Type string `json:"type"`
	// RawDelta is a string for text events; vLLM once sent an object for
	// reasoning deltas, so it is kept raw and read only when a string.
	RawDelta json.RawMessage `json:"delta"`
	Response *responseObject `json:"response"`
	// The "error" event carries code and message at the top level.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// responseObject is the part of a response object send reads.
type responseObject struct {
	// ID names the response for a later request's previous_response_id
	// (send --responses-chain).
	ID                string `json:"id"`
	Object            string `json:"object"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"summary"`
	} `json:"output"`
	Usage *responsesUsage `json:"usage"`
	// Error is kept raw: {"code","message"} or a string.
	Error json.RawMessage `json:"error"`
}

// responsesUsage is ResponseUsage: input_tokens, output_tokens,
// total_tokens and their details.
type responsesUsage struct {
	InputTokens        *tokens `json:"input_tokens"`
	OutputTokens       tokens  `json:"output_tokens"`
	TotalTokens        *tokens `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens *tokens `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens *tokens `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// record maps the Responses names onto the record's (prompt_tokens is
// input_tokens, completion_tokens output_tokens).
func (u *responsesUsage) record() *records.Usage {
	out := &records.Usage{PromptTokens: u.InputTokens.ptr(), CompletionTokens: int(u.OutputTokens), TotalTokens: u.TotalTokens.ptr()}
	if d := u.InputTokensDetails; d != nil {
		out.CachedTokens = d.CachedTokens.ptr()
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens.ptr()
	}
	return out
}

// finishReason names a response's end as chat does: "stop" for
// completed, "length" for incomplete at max_output_tokens, else the
// incomplete reason or the status.
func (r *responseObject) finishReason() string {
	switch {
	case r.Status == "completed":
		return "stop"
	case r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		return "length"
	case r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "":
		return r.IncompleteDetails.Reason
	}
	return r.Status
}

// finish takes a whole response object (the terminal event's, or a
// non-streamed body): usage, finish reason, and a failure as a server
// error.
func (a *accumulator) finishResponse(r *responseObject) error {
	if se := ParseAPIError(r.Error); se != nil {
		return se
	}
	if r.Status == "failed" {
		return &ServerError{Message: "response failed"}
	}
	if r.Usage != nil {
		if u := r.Usage.record(); u.Counts() {
			a.res.Usage = u
		}
	}
	a.res.FinishReason = r.finishReason()
	a.res.ResponseID = r.ID
	return nil
}

// addOutput records one piece of output received at now (text or
// reasoning), with its timing when streamed.
func (a *accumulator) addOutput(text string, reasoning bool, now time.Time) {
	if text == "" {
		return
	}
	if reasoning {
		a.reas.WriteString(text)
	} else {
		a.out.WriteString(text)
	}
	if !a.res.Stream {
		return
	}
	if a.res.TTFTNs == nil {
		ttft := now.Sub(a.start).Nanoseconds()
		a.res.TTFTNs = &ttft
	} else {
		a.res.ITLNs = append(a.res.ITLNs, now.Sub(a.last).Nanoseconds())
	}
	a.last = now
}

// deltaText is a delta that is a JSON string, else "".
func deltaText(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// ReadResponses parses a streamed Responses answer into res: the
// text and reasoning deltas give the output and its timings (TTFT at the
// first, ITL between them), the terminal event the usage and finish
// reason. A stream that ends before its terminal event is truncated.
func ReadResponses(r io.Reader, start time.Time, res *records.Result) error {
	a := accumulator{res: res, start: start}
	defer a.finish()
	res.Stream = true
	sr := newSSEReader(r)
	for {
		data, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w (%w after %d events)", ErrTruncated, ErrNoTerminal, res.Chunks)
			}
			return err
		}
		now := time.Now()
		if string(data) == "[DONE]" {
			return fmt.Errorf("%w (%w: [DONE] after %d events)", ErrTruncated, ErrNoTerminal, res.Chunks)
		}
		res.Chunks++
		var ev responseEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return usageError(fmt.Sprintf("event %d", res.Chunks), err)
		}
		switch ev.Type {
		case "response.output_text.delta":
			a.addOutput(deltaText(ev.RawDelta), false, now)
		case "response.reasoning_text.delta", "response.reasoning.delta":
			a.addOutput(deltaText(ev.RawDelta), true, now)
		case "error":
			out := &ServerError{Message: ev.Message}
			if se := ParseAPIError(ev.Code); se != nil {
				out.Code = se.Message // a string or a number, as written
			}
			return out
		case "response.completed", "response.incomplete", "response.failed":
			if ev.Response == nil {
				return &ProtocolError{Err: fmt.Errorf("event %d: %s without its response", res.Chunks, ev.Type)}
			}
			if ev.Type == "response.failed" && ev.Response.Status == "" {
				ev.Response.Status = "failed"
			}
			return a.finishResponse(ev.Response)
		}
	}
}

// ReadResponsesJSON parses a non-streamed response object into res: the
// output message's output_text parts are the text, reasoning items'
// content (or summary) the reasoning.
func ReadResponsesJSON(body []byte, start, end time.Time, res *records.Result) error {
	a := accumulator{res: res, start: start}
	defer a.finish()
	var r responseObject
	if err := json.Unmarshal(body, &r); err != nil {
		return usageError("the response body", err)
	}
	res.Chunks = 1
	if r.Object != "response" {
		if se := ParseAPIError(r.Error); se != nil {
			return se
		}
		return &ProtocolError{Err: fmt.Errorf("not a response object (object %q)", r.Object)}
	}
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				if p.Type == "output_text" {
					a.addOutput(p.Text, false, end)
				}
			}
		case "reasoning":
			n := 0
			for _, p := range item.Content {
				if p.Type == "reasoning_text" {
					a.addOutput(p.Text, true, end)
					n++
				}
			}
			for _, p := range item.Summary {
				if n == 0 && p.Type == "summary_text" {
					a.addOutput(p.Text, true, end)
				}
			}
		}
	}
	return a.finishResponse(&r)
}
