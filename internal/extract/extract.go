// Package extract reads back what an ISL count needs from an OpenAI-style
// request body, following AIPerf's extract_payload_inputs walk: the text
// of every message (string content, or the "text" parts of list content),
// media parts counted and dropped, a chat view of the messages (text parts
// joined with "", as AIPerf templates them), tool definitions, and the
// template kwargs a server would pass. measure reads every payload and
// message record through it, so there is one notion of "the text of a
// request". The other direction, building a body from a conversation, is
// send.Builder (send/body.go) over wire.Build's request.Request; a typed
// request is counted by reading its body back through this package
// (serverprofile.PromptOf).
package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/records"
)

// Inputs is what a request body holds for ISL purposes.
type Inputs struct {
	// Endpoint is the API the body is for, recognised by its shape:
	// endpoint.Chat ("messages"), Completions ("prompt") or Responses
	// ("input").
	Endpoint endpoint.Kind
	// Prompts is a completions body's prompt, one element per prompt the
	// server runs (a string, each string of a list, the token-id list, or
	// each token-id list of a list of lists).
	Prompts []Prompt
	// Pretokenised counts the token ids given as prompts, which AIPerf
	// adds to its count of the texts.
	Pretokenised int
	// Instructions is a Responses body's "instructions" (HasInstructions
	// when it is a string, empty or not).
	Instructions    string
	HasInstructions bool
	// Items is a Responses body's "input" list, in order; a string input
	// is InputText with StringInput set (and no Items).
	Items       []Item
	InputText   string
	StringInput bool
	// Chat is the chat view of the messages, in order: each message with a
	// string role, its text parts (media dropped) and its tool calls.
	// AIPerf templates each message with its parts joined by "".
	Chat []Message
	// NumMessages counts the messages of the chat view.
	NumMessages int
	// Texts is every text, in order: message contents (each text part on
	// its own), assistant tool-call names and arguments, then the name,
	// description and parameters (JSON) of each top-level tool.
	Texts []string
	// ToolTexts is the part of Texts that comes from top-level tools.
	ToolTexts []string
	// Tools is the top-level "tools" value, when present and not null.
	Tools json.RawMessage
	// Kwargs is "chat_template_kwargs", which vLLM and SGLang pass to the
	// template.
	Kwargs map[string]any
	// Media counts image, audio and video parts.
	Media records.Media
	// MultiTextParts is true when some message has two or more text
	// parts: servers that join parts with "\n" (vLLM) then see other text
	// than AIPerf's "" join.
	MultiTextParts bool
	// Body is the request's members; RawMessages counts the elements of
	// "messages" (Chat leaves out those without a string role).
	Body        jsonobj.Object
	RawMessages int
}

// Message is one message of the chat view.
type Message struct {
	Role      string
	Parts     []string
	ToolCalls json.RawMessage // nil when absent or null
	// Index is the message's position in "messages"; Fields are all its
	// members, for server profiles that read more than the chat view.
	Index  int
	Fields jsonobj.Object
	// StringContent is true when "content" is a JSON string (Parts then
	// holds it, decoded, as its one element).
	StringContent bool
}

// Content is the message's text parts joined with sep ("" for AIPerf's
// view, "\n" for vLLM's).
func (m Message) Content(sep string) string {
	if len(m.Parts) == 1 {
		return m.Parts[0]
	}
	return strings.Join(m.Parts, sep)
}

// ErrNoMessages is returned for a body that is none of the endpoints' bodies:
// no "messages" array (chat), no "prompt" (completions), no "input"
// (responses).
var ErrNoMessages = errors.New(`payload has no "messages" array (nor a completions "prompt" or a Responses "input")`)

// message is one element of "messages": Role is set when the role is a
// JSON string (others are not part of the chat view).
type message struct {
	Role      string
	HasRole   bool
	Content   json.RawMessage
	ToolCalls json.RawMessage
	Fields    jsonobj.Object
}

// part is a content part with a string "type"; Text is the raw "text".
type part struct {
	Type string
	Text json.RawMessage
}

// text decodes the part's text: a missing or non-string text is not ok,
// null is "" (as go-json decodes null into a string).
func (p part) text() (string, bool) {
	if p.Text == nil {
		return "", false
	}
	if isNull(p.Text) {
		return "", true
	}
	if !jsonobj.IsString(p.Text) {
		return "", false
	}
	s, err := jsonobj.String(p.Text)
	return s, err == nil
}

// decodePart reads one content part; parts that are not objects, or whose
// type is not a string, are not ok (null is an empty part).
func decodePart(raw json.RawMessage) (part, bool) {
	if isNull(raw) {
		return part{}, true
	}
	obj, err := jsonobj.Members(raw)
	if err != nil {
		return part{}, false
	}
	var p part
	if t, ok := obj.Get("type"); ok && !isNull(t) {
		if !jsonobj.IsString(t) {
			return part{}, false
		}
		if p.Type, err = jsonobj.String(t); err != nil {
			return part{}, false
		}
	}
	p.Text, _ = obj.Get("text")
	return p, true
}

// Body reads an OpenAI chat-completions body.
func Body(body []byte) (*Inputs, error) {
	obj, err := jsonobj.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return Object(obj)
}

// Object is Body for a body jsonobj.Parse has already split
// into members (measure has parsed it to recognise the record): the
// members are slices of the validated body, so nothing is validated twice.
// The endpoint is told by the body's shape: "messages" (chat) first, then
// "prompt" (completions), then "input" (responses), the order of AIPerf's
// walk (extract_inputs: items arrays, then the flat "prompt").
func Object(obj jsonobj.Object) (*Inputs, error) {
	messages, _ := obj.Get("messages")
	if isNull(messages) {
		if prompt, _ := obj.Get("prompt"); !isNull(prompt) {
			return completions(obj, prompt)
		}
		if input, _ := obj.Get("input"); !isNull(input) {
			return responses(obj, input)
		}
		return nil, ErrNoMessages
	}
	msgs, err := decodeMessages(messages)
	if err != nil {
		return nil, err
	}
	ex := &Inputs{Endpoint: endpoint.Chat, Chat: make([]Message, 0, len(msgs)), Body: obj, RawMessages: len(msgs)}
	for i, m := range msgs {
		var parts []string
		stringContent := false
		switch c := bytes.TrimSpace(m.Content); {
		case len(c) == 0 || string(c) == "null":
		case c[0] == '"':
			stringContent = true
			s, err := jsonobj.String(c)
			if err != nil {
				return nil, fmt.Errorf("payload: messages[%d].content: %w", i, err)
			}
			parts = []string{s}
			ex.Texts = append(ex.Texts, s)
		case c[0] == '[':
			ps, err := jsonobj.Elements(c)
			if err != nil {
				return nil, fmt.Errorf("payload: messages[%d].content: %w", i, err)
			}
			for j, pr := range ps {
				p, ok := decodePart(pr)
				if !ok {
					continue // AIPerf skips parts that are not objects
				}
				switch p.Type {
				case "text":
					s, ok := p.text()
					if !ok {
						return nil, fmt.Errorf("payload: messages[%d].content[%d].text is not a string", i, j)
					}
					parts = append(parts, s)
					ex.Texts = append(ex.Texts, s)
				case "image_url", "image":
					ex.Media.Images++
				case "input_audio", "audio_url", "audio":
					ex.Media.Audios++
				case "video_url", "video":
					ex.Media.Videos++
				}
			}
		default:
			return nil, fmt.Errorf("payload: messages[%d].content is neither a string nor a list of parts", i)
		}
		if len(parts) > 1 {
			ex.MultiTextParts = true
		}
		ex.Texts = append(ex.Texts, toolCallTexts(m.ToolCalls)...)
		if m.HasRole {
			msg := Message{Role: m.Role, Parts: parts, Index: i, Fields: m.Fields, StringContent: stringContent}
			if !isNull(m.ToolCalls) {
				msg.ToolCalls = m.ToolCalls
			}
			ex.Chat = append(ex.Chat, msg)
		}
	}
	if err := ex.topLevel(obj); err != nil {
		return nil, err
	}
	return ex, nil
}

// topLevel reads the request-level members every endpoint's body may
// carry: tools and chat_template_kwargs.
func (ex *Inputs) topLevel(obj jsonobj.Object) error {
	if tools, _ := obj.Get("tools"); !isNull(tools) {
		ex.Tools = tools
		ex.ToolTexts = append(ex.ToolTexts, toolTexts(tools)...)
		ex.Texts = append(ex.Texts, toolTexts(tools)...)
	}
	if kwargs, _ := obj.Get("chat_template_kwargs"); !isNull(kwargs) {
		if err := json.Unmarshal(kwargs, &ex.Kwargs); err != nil {
			return fmt.Errorf(`payload: "chat_template_kwargs" is not an object`)
		}
	}
	ex.NumMessages = len(ex.Chat)
	return nil
}

// toolCallTexts returns the function names and argument strings of an
// assistant message's tool calls.
func toolCallTexts(raw json.RawMessage) []string {
	if isNull(raw) {
		return nil
	}
	var calls []struct {
		Function struct {
			Name      any `json:"name"`
			Arguments any `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	var out []string
	for _, c := range calls {
		if s, ok := c.Function.Name.(string); ok {
			out = append(out, s)
		}
		if s, ok := c.Function.Arguments.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// toolTexts returns each tool's name, description and parameters (as
// compact JSON), the texts AIPerf counts for tools.
func toolTexts(raw json.RawMessage) []string {
	var tools []struct {
		Function *struct {
			Name        any             `json:"name"`
			Description any             `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
		Name        any             `json:"name"`
		Description any             `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil
	}
	var out []string
	for _, t := range tools {
		name, desc, params := t.Name, t.Description, t.Parameters
		if t.Function != nil {
			name, desc, params = t.Function.Name, t.Function.Description, t.Function.Parameters
		}
		if s, ok := name.(string); ok {
			out = append(out, s)
		}
		if s, ok := desc.(string); ok {
			out = append(out, s)
		}
		if !isNull(params) {
			var buf bytes.Buffer
			if json.Compact(&buf, params) == nil {
				out = append(out, buf.String())
			}
		}
	}
	return out
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// decodeMessages splits the message array into its members (keys matched
// exactly, as Python's dict lookups are), saying which element is wrong.
func decodeMessages(raw json.RawMessage) ([]message, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, fmt.Errorf(`payload: "messages" is not an array`)
	}
	msgs := make([]message, len(elems))
	for i, e := range elems {
		if isNull(e) {
			continue // an empty message, as go-json decodes null
		}
		obj, err := jsonobj.Members(e)
		if err != nil {
			return nil, fmt.Errorf("payload: messages[%d] is not an object", i)
		}
		m := &msgs[i]
		m.Fields = obj
		if role, ok := obj.Get("role"); ok && jsonobj.IsString(role) {
			if m.Role, err = jsonobj.String(role); err != nil {
				return nil, fmt.Errorf("payload: messages[%d].role: %w", i, err)
			}
			m.HasRole = true
		}
		m.Content, _ = obj.Get("content")
		m.ToolCalls, _ = obj.Get("tool_calls")
	}
	return msgs, nil
}

// Contents returns each chat-view message's content (parts joined by "").
func (ex *Inputs) Contents() []string {
	out := make([]string, len(ex.Chat))
	for i, m := range ex.Chat {
		out[i] = m.Content("")
	}
	return out
}
