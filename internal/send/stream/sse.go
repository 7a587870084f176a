// Package stream reads an OpenAI-compatible server's answer into send's
// result record: a chat or completions SSE stream (ReadChat) or body
// (ReadChatJSON), a Responses event stream (ReadResponses) or response
// object (ReadResponsesJSON). Each fills records.Result: the output and
// reasoning text, TTFT and inter-token latencies, finish reason, usage;
// a server's error is a *ServerError, an answer that cannot be used a
// *ProtocolError, a stream cut short wraps ErrTruncated.
package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
)

// maxEventSize bounds one SSE event (a runaway server must not eat memory).
const maxEventSize = 16 << 20

// ErrTruncated marks a stream or body that ended before its end marker.
var ErrTruncated = errors.New("stream ended before data: [DONE]")

// sseReader splits a text/event-stream into the data of each event
// (WHATWG rules: "data:" lines joined by "\n", an optional space after the
// colon, comments and other fields ignored, a blank line ends the event),
// except that a lone "\r" does not end a line: no OpenAI-compatible server
// sends one, and a "\r" inside JSON text is escaped anyway.
type sseReader struct {
	br   *bufio.Reader
	data []byte
	line []byte
	// midEvent: the input ended inside an event (a partial line, or
	// data lines without the blank line that ends the event).
	midEvent bool
}

// readers are the 4 KB buffers of finished streams, for the next ones: a
// buffer per request is most of a stream's garbage.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// newSSEReader reads r through a 4 KB buffer, as the transport's own
// below it (a longer line is gathered in s.line); release hands the buffer
// back.
func newSSEReader(r io.Reader) *sseReader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return &sseReader{br: br}
}

func (s *sseReader) release() {
	s.br.Reset(nil)
	readers.Put(s.br)
	s.br = nil
}

// Next returns the next event's data (valid until the next call); io.EOF
// at a clean end, io.ErrUnexpectedEOF when the stream stops mid-event.
func (s *sseReader) Next() ([]byte, error) {
	s.data = s.data[:0]
	have := false
	for {
		line, err := s.readLine()
		if err != nil {
			s.midEvent = have || len(line) > 0
			if errors.Is(err, io.EOF) && s.midEvent {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			if have {
				return s.data, nil
			}
			continue
		}
		name, value, found := bytes.Cut(line, []byte{':'})
		if len(name) == 0 {
			continue // comment
		}
		if !found {
			value = nil
		} else if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(name) != "data" {
			continue
		}
		if have {
			s.data = append(s.data, '\n')
		}
		have = true
		if len(s.data)+len(value) > maxEventSize {
			return nil, fmt.Errorf("SSE event over %d bytes", maxEventSize)
		}
		s.data = append(s.data, value...)
	}
}

// readLine returns one line without its ending (\n or \r\n). The
// returned error is io.EOF (with any partial line) at end of input.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if len(s.line) > maxEventSize {
			return nil, fmt.Errorf("SSE line over %d bytes", maxEventSize)
		}
		if err == nil {
			l := s.line[:len(s.line)-1]
			return bytes.TrimSuffix(l, []byte{'\r'}), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(s.line, []byte{'\r'}), err
	}
}

// chunk is the part of a chat.completion(.chunk) or a (streamed)
// text_completion send reads.
type chunk struct {
	// The first choice only, in an array rather than a slice, with values
	// rather than pointers (null and "" mean the same here): no allocation
	// per chunk but the strings (BenchmarkReadStream). send asks for one
	// choice; a server that streams several (n > 1) sends one per chunk.
	Choices [1]struct {
		Delta   message `json:"delta"`
		Message message `json:"message"`
		// Text is a completions choice's output (text_completion,
		// streamed or not).
		Text         string `json:"text"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
	// Error is kept raw: servers send an object or a bare string.
	Error json.RawMessage `json:"error"`
}

type message struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
}

func (m *message) empty() bool {
	return m.Content == "" && m.ReasoningContent == "" && m.Reasoning == ""
}

type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// ServerError is an error the server reported in its response body: its
// message, and its code and type when it gave them.
type ServerError struct{ Message, Code, Type string }

func (e *ServerError) Error() string {
	msg := "server error: " + e.Message
	if e.Type != "" || e.Code != "" {
		msg += " (" + strings.TrimSpace(e.Type+" "+e.Code) + ")"
	}
	return msg
}

// ParseAPIError reads an OpenAI-style error value: {"message", "type",
// "code"} or a bare string; nil when raw is absent or null.
func ParseAPIError(raw json.RawMessage) *ServerError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &ServerError{Message: s}
	}
	var e apiError
	if json.Unmarshal(raw, &e) != nil {
		return &ServerError{Message: string(raw)}
	}
	out := &ServerError{Message: e.Message, Type: e.Type}
	var code string
	switch {
	case len(e.Code) == 0 || string(e.Code) == "null":
	case json.Unmarshal(e.Code, &code) == nil:
		out.Code = code
	default:
		out.Code = string(e.Code) // a number, as written
	}
	return out
}

type usageJSON struct {
	PromptTokens        *tokens `json:"prompt_tokens"`
	CompletionTokens    tokens  `json:"completion_tokens"`
	TotalTokens         *tokens `json:"total_tokens"`
	ReasoningTokens     *tokens `json:"reasoning_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *tokens `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *tokens `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *usageJSON) record() *records.Usage {
	out := &records.Usage{PromptTokens: u.PromptTokens.ptr(), CompletionTokens: int(u.CompletionTokens),
		TotalTokens: u.TotalTokens.ptr(), ReasoningTokens: u.ReasoningTokens.ptr()}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		out.ReasoningTokens = d.ReasoningTokens.ptr()
	}
	if d := u.PromptTokensDetails; d != nil {
		out.CachedTokens = d.CachedTokens.ptr()
	}
	return out
}

// tokens is a token count of a server's usage: a JSON integer, or a
// number with no fraction (12.0, as some servers write one). Anything
// else is a protocol error that says what the server sent, not the JSON
// decoder's words about Go types (issue 27 item 18).
type tokens int

func (n *tokens) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil && v == int64(int(v)) {
		*n = tokens(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return &tokenCountError{string(b)}
	}
	*n = tokens(f)
	return nil
}

func (n *tokens) ptr() *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// tokenCountError is a usage token count that is not a whole number.
type tokenCountError struct{ value string }

func (e *tokenCountError) Error() string {
	v := e.value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return "usage: a token count is " + v + ", not a whole number"
}

// usageError finds a tokenCountError however the JSON decoder wrapped it:
// its message alone, with where it was.
func usageError(where string, err error) error {
	if te, ok := errors.AsType[*tokenCountError](err); ok {
		return &ProtocolError{Err: fmt.Errorf("%s: %w", where, te)}
	}
	return &ProtocolError{Err: fmt.Errorf("%s: %w", where, err)}
}

// accumulator turns chunks into a Result.
type accumulator struct {
	res       *records.Result
	start     time.Time
	last      time.Time
	out, reas strings.Builder
}

// add applies one decoded chunk received at now.
func (a *accumulator) add(c *chunk, now time.Time) error {
	if se := ParseAPIError(c.Error); se != nil {
		return se
	}
	output := false
	for i := range c.Choices {
		ch := &c.Choices[i]
		// A chunk carries a delta; a whole completion a message.
		m := &ch.Delta
		if m.empty() {
			m = &ch.Message
		}
		if m.Content != "" {
			a.out.WriteString(m.Content)
			output = true
		}
		// vLLM says reasoning_content, newer servers reasoning.
		r := m.ReasoningContent
		if r == "" {
			r = m.Reasoning
		}
		if r != "" {
			a.reas.WriteString(r)
			output = true
		}
		if ch.Text != "" {
			a.out.WriteString(ch.Text)
			output = true
		}
		if ch.FinishReason != "" {
			a.res.FinishReason = ch.FinishReason
		}
	}
	if c.Usage != nil {
		if u := c.Usage.record(); u.Counts() {
			a.res.Usage = u
		}
	}
	// Timing per chunk means something only for a stream: a JSON body's
	// first output arrives with the whole body (latency_ns says when).
	if output && a.res.Stream {
		if a.res.TTFTNs == nil {
			ttft := now.Sub(a.start).Nanoseconds()
			a.res.TTFTNs = &ttft
		} else {
			if a.res.ITLNs == nil {
				a.res.ITLNs = make([]int64, 0, 16) // not 1, 2, 4, 8 and 16
			}
			a.res.ITLNs = append(a.res.ITLNs, now.Sub(a.last).Nanoseconds())
		}
		a.last = now
	}
	return nil
}

func (a *accumulator) finish() {
	a.res.OutputText = a.out.String()
	a.res.Reasoning = a.reas.String()
}

// NoteNoDone is result.note of a stream that ended without data: [DONE]
// after everything a complete answer carries.
const NoteNoDone = "stream ended without data: [DONE] after its finish_reason and usage: complete"

// ReadChat parses an SSE response into res. It returns ErrTruncated
// (wrapped) when the stream ends without [DONE] and the read error when
// the connection fails; except that a stream whose last event is whole,
// and which carried a finish_reason and the usage send asks for, is
// complete without [DONE] (some servers close the stream there, issue 27
// item 12): a success, noted in res.Note.
func ReadChat(r io.Reader, start time.Time, res *records.Result) error {
	a := accumulator{res: res, start: start}
	defer a.finish()
	res.Stream = true
	sr := newSSEReader(r)
	defer sr.release()
	var c chunk
	for {
		data, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				if !sr.midEvent && res.FinishReason != "" && res.Usage.Counts() {
					res.Note = NoteNoDone
					return nil
				}
				return fmt.Errorf("%w after %d chunks", ErrTruncated, res.Chunks)
			}
			return err
		}
		now := time.Now()
		if string(data) == "[DONE]" {
			return nil
		}
		res.Chunks++
		// One chunk value for the whole stream, zeroed for each event: a
		// fresh one escapes to the heap at every chunk.
		c = chunk{}
		if err := json.Unmarshal(data, &c); err != nil {
			return usageError(fmt.Sprintf("chunk %d", res.Chunks), err)
		}
		if err := a.add(&c, now); err != nil {
			return err
		}
	}
}

// Readers are the stream and whole-body readers of endpoint kind's
// answers.
func Readers(kind endpoint.Kind) (sse func(io.Reader, time.Time, *records.Result) error, whole func([]byte, time.Time, time.Time, *records.Result) error) {
	if kind == endpoint.Responses {
		return ReadResponses, ReadResponsesJSON
	}
	return ReadChat, ReadChatJSON
}

// ReadChatJSON parses a non-streaming chat.completion or text_completion
// body into res.
func ReadChatJSON(body []byte, start, end time.Time, res *records.Result) error {
	a := accumulator{res: res, start: start}
	defer a.finish()
	var c chunk
	if err := json.Unmarshal(body, &c); err != nil {
		return usageError("the response body", err)
	}
	res.Chunks = 1
	return a.add(&c, end)
}

// ProtocolError is a response send received whole but could not use.
type ProtocolError struct{ Err error }

func (e *ProtocolError) Error() string { return e.Err.Error() }
func (e *ProtocolError) Unwrap() error { return e.Err }
