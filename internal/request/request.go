// Package request is one request as it goes on the wire: the endpoint and
// the typed messages (a system prompt first when there is one; a Responses
// body's instructions and input items and a completions body's prompt are
// written from them), the tools, and the body members they make.
//
// compose and send build requests (internal/wire makes one from a
// conversation record) and write them with AppendInput; the cache-bust
// marker is injected into them (internal/cachebust). Counting goes the
// other way: a server profile decodes the body (internal/extract) and
// renders it as that server does (internal/serverprofile), so what is
// counted is exactly what is sent.
//
// The package sits below cachebust, wire, send, compose and serverprofile
// (it imports only endpoint), which is why it is not part of wire: the
// marker is injected into its messages, and wire imports cachebust.
package request

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
)

// Part is one part of list content: a text part ({"type": "text",
// "text": ...}), or, when ImageURL is set, an image ({"type":
// "image_url", "image_url": {"url": ...}}; a Responses "input_image").
type Part struct {
	Text     string
	ImageURL string
}

// HasImage reports whether some part of parts is an image.
func HasImage(parts []Part) bool {
	for i := range parts {
		if parts[i].ImageURL != "" {
			return true
		}
	}
	return false
}

// Message is one chat message.
type Message struct {
	Role string
	// Content is the text content when Parts is nil and Null is false.
	Content string
	// Parts is list content (non-nil, possibly empty): text parts, kept as
	// parts on the wire.
	Parts []Part
	// Null is content null (a message of tool calls only, say).
	Null bool
	// Name, ToolCallID and Reasoning ("reasoning_content") are written
	// when not empty; ToolCalls (an assistant's, as given) when not nil.
	Name       string
	ToolCalls  json.RawMessage
	ToolCallID string
	Reasoning  string
}

// Plain reports whether m is a role and a string content alone, the shape
// synthetic conversations have (and every Responses and completions
// request compose writes).
func (m *Message) Plain() bool {
	return m.Parts == nil && !m.Null && m.Name == "" && m.ToolCalls == nil && m.ToolCallID == "" && m.Reasoning == ""
}

// Request is one request: Messages for every endpoint (a completions
// request is one user message, its prompt).
type Request struct {
	Endpoint endpoint.Kind
	Messages []Message
	// Marker is the cache-bust marker the messages carry ("" for none)
	// and MarkerAt the message it sits in (-1 for none).
	Marker   string
	MarkerAt int
	// Tools is the request's "tools" (a JSON array as given), nil for none.
	Tools json.RawMessage
	// Kwargs is "chat_template_kwargs" (a JSON object as given), nil for
	// none.
	Kwargs json.RawMessage
	// AddGenerationPrompt, when not nil, and ContinueFinalMessage, when
	// true, are written as the chat request's fields; otherwise a server
	// applies its defaults (true and false).
	AddGenerationPrompt  *bool
	ContinueFinalMessage bool
}

// AppendMessage writes m as a JSON object, its keys in sorted order (as
// json.Marshal writes a map, which send's bodies were before): content,
// name, reasoning_content, role, tool_call_id, tool_calls.
func AppendMessage(buf []byte, m *Message) []byte {
	buf = append(buf, `{"content":`...)
	switch {
	case m.Null:
		buf = append(buf, "null"...)
	case m.Parts != nil:
		buf = AppendParts(buf, m.Parts)
	default:
		buf = AppendString(buf, m.Content)
	}
	if m.Name != "" {
		buf = append(buf, `,"name":`...)
		buf = AppendString(buf, m.Name)
	}
	if m.Reasoning != "" {
		buf = append(buf, `,"reasoning_content":`...)
		buf = AppendString(buf, m.Reasoning)
	}
	buf = append(buf, `,"role":`...)
	buf = AppendString(buf, m.Role)
	if m.ToolCallID != "" {
		buf = append(buf, `,"tool_call_id":`...)
		buf = AppendString(buf, m.ToolCallID)
	}
	if m.ToolCalls != nil {
		buf = append(buf, `,"tool_calls":`...)
		buf = append(buf, m.ToolCalls...)
	}
	return append(buf, '}')
}

// AppendParts writes text parts as {"text": ..., "type": "text"} objects
// (sorted keys, as the marker part has always been written) and image
// parts as {"image_url": {"url": ...}, "type": "image_url"}.
func AppendParts(buf []byte, parts []Part) []byte {
	buf = append(buf, '[')
	for i := range parts {
		if i > 0 {
			buf = append(buf, ',')
		}
		if parts[i].ImageURL != "" {
			buf = append(buf, `{"image_url":{"url":`...)
			buf = AppendString(buf, parts[i].ImageURL)
			buf = append(buf, `},"type":"image_url"}`...)
			continue
		}
		buf = append(buf, `{"text":`...)
		buf = AppendString(buf, parts[i].Text)
		buf = append(buf, `,"type":"text"}`...)
	}
	return append(buf, ']')
}

// AppendMessages writes msgs as a JSON array.
func AppendMessages(buf []byte, msgs []Message) []byte {
	buf = append(buf, '[')
	for i := range msgs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = AppendMessage(buf, &msgs[i])
	}
	return append(buf, ']')
}

// MarshalJSON writes m as AppendMessage does.
func (m Message) MarshalJSON() ([]byte, error) { return AppendMessage(nil, &m), nil }

// ErrShape is a request its endpoint cannot carry.
var ErrShape = errors.New("request: shape not carried by the endpoint")

// AppendInput writes r's members of the body, each preceded by a comma:
//   - chat: "messages" (then "tools", "chat_template_kwargs",
//     "add_generation_prompt" and "continue_final_message" when set);
//   - responses: a leading system message as "instructions", the other
//     messages as "input" message items ({"type", "role", "content"}, as
//     AIPerf writes them), which is how the server turns them back into
//     the messages (vLLM's construct_input_messages);
//   - completions: "prompt", the one message's content (promptList: as a
//     one-element list, as AIPerf's CompletionsEndpoint writes it; a
//     server counts a list of prompts as their sum).
func (r *Request) AppendInput(buf []byte, promptList bool) ([]byte, error) {
	switch r.Endpoint.OrChat() {
	case endpoint.Completions:
		if len(r.Messages) != 1 || !r.Messages[0].Plain() || r.Tools != nil || r.Kwargs != nil || r.AddGenerationPrompt != nil || r.ContinueFinalMessage {
			return buf, fmt.Errorf("%w: a completions request is one prompt, not %d messages", ErrShape, len(r.Messages))
		}
		buf = append(buf, `,"prompt":`...)
		if promptList {
			buf = append(buf, '[')
		}
		buf = AppendString(buf, r.Messages[0].Content)
		if promptList {
			buf = append(buf, ']')
		}
		return buf, nil
	case endpoint.Responses:
		msgs := r.Messages
		for i := range msgs {
			if !msgs[i].Plain() && !imageMessage(&msgs[i]) {
				return buf, fmt.Errorf("%w: message %d of a Responses request has more than a role and text", ErrShape, i)
			}
		}
		if r.Tools != nil || r.Kwargs != nil || r.AddGenerationPrompt != nil || r.ContinueFinalMessage {
			return buf, fmt.Errorf("%w: tools or chat fields on a Responses request", ErrShape)
		}
		if len(msgs) > 0 && msgs[0].Role == "system" {
			buf = append(buf, `,"instructions":`...)
			buf = AppendString(buf, msgs[0].Content)
			msgs = msgs[1:]
		}
		buf = append(buf, `,"input":[`...)
		for i := range msgs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"type":"message","role":`...)
			buf = AppendString(buf, msgs[i].Role)
			buf = append(buf, `,"content":`...)
			if msgs[i].Parts != nil {
				buf = appendResponsesParts(buf, msgs[i].Parts)
			} else {
				buf = AppendString(buf, msgs[i].Content)
			}
			buf = append(buf, '}')
		}
		return append(buf, ']'), nil
	}
	buf = append(buf, `,"messages":`...)
	buf = AppendMessages(buf, r.Messages)
	if r.Tools != nil {
		buf = append(buf, `,"tools":`...)
		buf = append(buf, r.Tools...)
	}
	if r.Kwargs != nil {
		buf = append(buf, `,"chat_template_kwargs":`...)
		buf = append(buf, r.Kwargs...)
	}
	if r.AddGenerationPrompt != nil {
		buf = append(buf, `,"add_generation_prompt":`...)
		buf = strconv.AppendBool(buf, *r.AddGenerationPrompt)
	}
	if r.ContinueFinalMessage {
		buf = append(buf, `,"continue_final_message":true`...)
	}
	return buf, nil
}

// imageMessage is a user message of text and image parts alone, which a
// Responses input item carries as input_text and input_image parts.
func imageMessage(m *Message) bool {
	return m.Role == "user" && HasImage(m.Parts) && !m.Null && m.Name == "" && m.ToolCalls == nil && m.ToolCallID == "" && m.Reasoning == ""
}

// appendResponsesParts writes parts as a Responses message's content:
// {"type": "input_text", "text": ...} and {"type": "input_image",
// "image_url": ...} (OpenAI's ResponseInputImage: the URL is a string).
func appendResponsesParts(buf []byte, parts []Part) []byte {
	buf = append(buf, '[')
	for i := range parts {
		if i > 0 {
			buf = append(buf, ',')
		}
		if parts[i].ImageURL != "" {
			buf = append(buf, `{"type":"input_image","image_url":`...)
			buf = AppendString(buf, parts[i].ImageURL)
		} else {
			buf = append(buf, `{"type":"input_text","text":`...)
			buf = AppendString(buf, parts[i].Text)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// Body is r alone as a body: its input members and nothing else (what a
// server renders and counts of it; send adds the model, max_tokens,
// stream and --extra-body around the same members).
func (r *Request) Body() ([]byte, error) {
	buf := make([]byte, 0, 64+r.size())
	buf = append(buf, '{')
	buf, err := r.AppendInput(buf, false)
	if err != nil {
		return nil, err
	}
	buf[1] = ' ' // the first member's comma
	return append(buf, '}'), nil
}

func (r *Request) size() int {
	n := len(r.Tools)
	for i := range r.Messages {
		m := &r.Messages[i]
		n += 32 + len(m.Content) + len(m.ToolCalls) + len(m.Reasoning)
		for _, p := range m.Parts {
			n += 48 + len(p.Text) + len(p.ImageURL)
		}
	}
	return n
}

const hexDigits = "0123456789abcdef"

// plain are the ASCII bytes a JSON string holds as they are, HTML-safe.
var plain = func() (t [utf8.RuneSelf]bool) {
	for b := range t {
		t[b] = b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// AppendString appends s as a JSON string exactly as json.Marshal writes
// it (FuzzAppendString): <, > and & escaped as HTML needs, U+2028 and
// U+2029 escaped, each invalid UTF-8 byte replaced by U+FFFD. Marshalling
// through reflection was the largest part of send's own time per request
// (make bench-send's CPU per request).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
