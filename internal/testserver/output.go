package testserver

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/islkit/islkit/internal/endpoint"
)

// output is one response to write: n synthetic tokens for req on its
// endpoint, with the prompt accounting and the fault drawn for it.
type output struct {
	arrived        time.Time // when the request came in (TTFT in /metrics)
	endpoint       endpoint.Kind
	req            *Request
	prompt, cached int
	// images are the prompt's image tokens (a vision-language model).
	images        int
	n             int
	finish, fault string
	// reasoning is how many of the n tokens are reasoning (chat): the
	// first ones, as a reasoning model thinks before it answers.
	reasoning int
	// id is a Responses answer's id (stored for previous_response_id).
	id string
	// release gives back the request's place among those served
	// (MaxConcurrency) before the stream's last event; nil: none.
	release func()
}

func (o *output) text() string { return wordRange(o.reasoning, o.n) }

func (o *output) reasoningText() string { return wordRange(0, o.reasoning) }

func wordRange(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(word(i))
	}
	return b.String()
}

// usage is the chat and completions usage object; reasoning tokens are
// inside completion_tokens and reported in completion_tokens_details; with
// images, vLLM reports their placeholder tokens again in
// prompt_tokens_details.multimodal_tokens (chat_completion/serving.py
// @006c49d4, docs/reference/server-preprocessing.md §1.1).
func (o *output) usage() map[string]any {
	u := usage(o.prompt, o.cached, o.n)
	if o.images > 0 {
		u["prompt_tokens_details"].(map[string]any)["multimodal_tokens"] = o.images
	}
	if o.reasoning > 0 {
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": o.reasoning}
	}
	return u
}

// body is the non-streamed response: a chat completion, a text completion
// (choices[].text) or a Responses object.
func (o *output) body() []byte {
	now := time.Now().Unix()
	var resp any
	switch o.endpoint {
	case endpoint.Completions:
		resp = map[string]any{
			"id": "cmpl-islkit", "object": "text_completion", "created": now, "model": o.req.Model,
			"choices": []any{map[string]any{"index": 0, "text": o.text(), "logprobs": nil, "finish_reason": o.finish}},
			"usage":   o.usage(),
		}
	case endpoint.Responses:
		resp = o.response(now, "completed", true)
	default:
		msg := map[string]any{"role": "assistant", "content": o.text()}
		if o.reasoning > 0 {
			msg["reasoning_content"] = o.reasoningText()
		}
		resp = map[string]any{
			"id": "chatcmpl-islkit", "object": "chat.completion", "created": now, "model": o.req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": o.finish, "message": msg}},
			"usage":   o.usage(),
		}
	}
	data, _ := json.Marshal(resp)
	return data
}

// responseUsage is the Responses API's usage object (ResponseUsage:
// input_tokens, input_tokens_details.cached_tokens, output_tokens,
// output_tokens_details.reasoning_tokens, total_tokens).
func responseUsage(prompt, cached, completion int) map[string]any {
	return map[string]any{"input_tokens": prompt, "input_tokens_details": map[string]any{"cached_tokens": cached},
		"output_tokens": completion, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": prompt + completion}
}

// response is the Responses object (object "response"): with done, its
// one output message item holding the whole text as output_text, and the
// usage; before that (response.created) no output and null usage. Its
// status is "completed" also when max_output_tokens ended the output
// (OpenAI's API then says "incomplete", with incomplete_details.reason
// "max_output_tokens", and ends the stream with response.incomplete):
// every stream here ends in response.completed with the usage.
func (o *output) response(created int64, status string, done bool) map[string]any {
	r := map[string]any{
		"id": o.id, "object": "response", "created_at": created, "status": status,
		"model": o.req.Model, "error": nil, "incomplete_details": nil, "instructions": nil,
		"max_output_tokens": o.req.MaxOutputTokens, "parallel_tool_calls": true,
		"previous_response_id": nil, "tool_choice": "auto", "tools": []any{}, "truncation": "disabled",
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "metadata": map[string]any{},
		"output": []any{}, "usage": nil,
	}
	if done {
		r["output"] = []any{o.message(o.text(), "completed")}
		r["usage"] = responseUsage(o.prompt, o.cached, o.n)
		if o.images > 0 {
			r["usage"].(map[string]any)["input_tokens_details"].(map[string]any)["multimodal_tokens"] = o.images
		}
	}
	return r
}

func (o *output) message(text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}
	}
	return map[string]any{"id": "msg_islkit", "type": "message", "role": "assistant", "status": status, "content": content}
}

// sse frames one streamed event: chat and completions chunks are bare
// "data:" lines; Responses events also name their type in an "event:"
// line, as the OpenAI API and vLLM send them.
func (o *output) event(buf []byte, typ string, payload any) []byte {
	data, _ := json.Marshal(payload)
	if typ != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, typ...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// streamer writes one streamed response in the endpoint's event shapes.
type streamer struct {
	o       *output
	head    string // chat and completions: the chunk's leading members
	seq     int    // responses: sequence_number
	created int64
}

func newStreamer(o *output) *streamer {
	st := &streamer{o: o, created: time.Now().Unix()}
	model, _ := json.Marshal(o.req.Model)
	created := strconv.FormatInt(st.created, 10)
	switch o.endpoint {
	case endpoint.Completions:
		st.head = `data: {"id":"cmpl-islkit","object":"text_completion","created":` + created + `,"model":` + string(model) + `,"choices":[`
	default:
		st.head = `data: {"id":"chatcmpl-islkit","object":"chat.completion.chunk","created":` + created + `,"model":` + string(model) + `,"choices":[`
	}
	return st
}

func (st *streamer) chunk(buf []byte, choice string) []byte {
	buf = append(buf, st.head...)
	buf = append(buf, choice...)
	return append(buf, "]}\n\n"...)
}

// responses emits a Responses event with its type and sequence number.
func (st *streamer) responses(buf []byte, typ string, fields map[string]any) []byte {
	fields["type"] = typ
	fields["sequence_number"] = st.seq
	st.seq++
	return st.o.event(buf, typ, fields)
}

// start is what precedes the first token: the role chunk (chat), nothing
// (completions), or response.created, response.in_progress, the output
// item and its content part (responses, as vLLM's simple streaming
// events).
func (st *streamer) start(buf []byte) []byte {
	switch st.o.endpoint {
	case endpoint.Completions:
		return buf
	case endpoint.Responses:
		buf = st.responses(buf, "response.created", map[string]any{"response": st.o.response(st.created, "in_progress", false)})
		buf = st.responses(buf, "response.in_progress", map[string]any{"response": st.o.response(st.created, "in_progress", false)})
		buf = st.responses(buf, "response.output_item.added", map[string]any{"output_index": 0, "item": st.o.message("", "in_progress")})
		return st.responses(buf, "response.content_part.added", map[string]any{"output_index": 0, "item_id": "msg_islkit", "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	}
	return st.chunk(buf, `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`)
}

// token is one token's event.
func (st *streamer) token(buf []byte, i int) []byte {
	w := word(i)
	switch st.o.endpoint {
	case endpoint.Responses:
		return st.responses(buf, "response.output_text.delta", map[string]any{"output_index": 0, "item_id": "msg_islkit", "content_index": 0, "delta": w, "logprobs": []any{}})
	case endpoint.Completions:
		text, _ := json.Marshal(w)
		return st.chunk(buf, `{"index":0,"text":`+string(text)+`,"logprobs":null,"finish_reason":null}`)
	}
	content, _ := json.Marshal(w)
	if i < st.o.reasoning {
		return st.chunk(buf, `{"index":0,"delta":{"reasoning_content":`+string(content)+`},"finish_reason":null}`)
	}
	return st.chunk(buf, `{"index":0,"delta":{"content":`+string(content)+`},"finish_reason":null}`)
}

// end is the finish chunk, the usage chunk when stream_options asks for
// it, and [DONE] (chat, completions); or the done events and
// response.completed with the whole response and its usage (responses:
// usage is always there, and no [DONE] follows).
func (st *streamer) end(buf []byte) []byte {
	o := st.o
	if o.endpoint == endpoint.Responses {
		text := o.text()
		buf = st.responses(buf, "response.output_text.done", map[string]any{"output_index": 0, "item_id": "msg_islkit", "content_index": 0, "text": text, "logprobs": []any{}})
		buf = st.responses(buf, "response.content_part.done", map[string]any{"output_index": 0, "item_id": "msg_islkit", "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		buf = st.responses(buf, "response.output_item.done", map[string]any{"output_index": 0, "item": o.message(text, "completed")})
		return st.responses(buf, "response.completed", map[string]any{"response": o.response(st.created, "completed", true)})
	}
	if o.endpoint == endpoint.Completions {
		buf = st.chunk(buf, `{"index":0,"text":"","logprobs":null,"finish_reason":"`+o.finish+`"}`)
	} else {
		buf = st.chunk(buf, `{"index":0,"delta":{},"finish_reason":"`+o.finish+`"}`)
	}
	if o.req.StreamOptions != nil && o.req.StreamOptions.IncludeUsage {
		u, _ := json.Marshal(o.usage())
		buf = append(buf, st.head...)
		buf = append(buf, "],\"usage\":"...)
		buf = append(buf, u...)
		buf = append(buf, "}\n\n"...)
	}
	return append(buf, doneEvent...)
}

// doneEvent ends a chat or completions stream.
const doneEvent = "data: [DONE]\n\n"

func (s *Server) stream(w http.ResponseWriter, ctx context.Context, o *output) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if s.cfg.CloseAfterStream || s.cfg.NoDone {
		h.Set("Keep-Alive", "timeout=5, max=100")
		defer closeAfterStream(w)
	}
	fl := w.(http.Flusher)
	st := newStreamer(o)
	buf := make([]byte, 0, 4096)
	flush := func() bool {
		if _, err := w.Write(buf); err != nil {
			return false
		}
		buf = buf[:0]
		fl.Flush()
		return true
	}
	buf = st.start(buf)
	if !flush() || !sleep(ctx, s.prefill(o.prompt)) {
		return
	}
	s.metrics.firstToken(time.Since(o.arrived))
	var gap time.Duration
	if s.cfg.TokensPerSecond > 0 {
		gap = time.Duration(float64(time.Second) / s.cfg.TokensPerSecond)
	}
	next := time.Now()
	fault, n := o.fault, o.n
	for i := range n {
		buf = st.token(buf, i)
		if fault == FaultStall && i == 0 {
			flush()
			<-ctx.Done()
			return
		}
		if fault == FaultTruncate && i >= n/2 {
			flush()
			panic(http.ErrAbortHandler) // no terminating chunk: the client sees a broken body
		}
		if gap > 0 {
			// Pace against the schedule, not the last write, so slow
			// writes do not lower the rate.
			next = next.Add(gap)
			if !flush() || !sleep(ctx, time.Until(next)) {
				return
			}
		}
	}
	if fault == FaultStall { // n == 0: stall after the first events
		flush()
		<-ctx.Done()
		return
	}
	if fault == FaultTruncate {
		flush()
		panic(http.ErrAbortHandler)
	}
	s.metrics.finished(o)
	buf = st.end(buf)
	if o.release != nil {
		o.release()
	}
	if s.cfg.NoDone {
		buf = bytes.TrimSuffix(buf, []byte(doneEvent))
	}
	flush()
}
