package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
)

// Dataset formats (--dataset-format).
const (
	FormatAuto     = "auto"
	FormatShareGPT = "sharegpt" // {"conversations": [{"from", "value"}]}, JSON array or JSONL
	FormatOpenAI   = "openai"   // {"messages": [{"role", "content"}]} per line
	FormatPrompts  = "prompts"  // {"prompt"} per line, or plain text lines
)

// Dialog is one conversation of a dataset: an optional system prompt, then
// user turns, each with the dataset's reply when it has one.
type Dialog struct {
	// Line is the dialog's line (JSONL, text) or, when InArray, its
	// 1-based record in the JSON array the file is.
	Line    int
	InArray bool
	System  *string
	// SystemParts is the system message's text parts when its content
	// was a list (System is then their concatenation).
	SystemParts []string
	Turns       []DialogTurn
	// Tools is an OpenAI messages line's "tools", as given.
	Tools json.RawMessage
}

// Pos names where the dialog is in its file: "line N", or "record N of
// the JSON array" (which a line number would misname).
func (d *Dialog) Pos() string { return pos(d.Line, d.InArray) }

func pos(n int, inArray bool) string {
	if inArray {
		return fmt.Sprintf("record %d of the JSON array", n)
	}
	return fmt.Sprintf("line %d", n)
}

// Where names line n of file ("FILE:N"), or record n of the JSON array
// file is ("FILE: record N of the JSON array").
func Where(file string, n int, inArray bool) string {
	if inArray {
		return file + ": " + pos(n, true)
	}
	return fmt.Sprintf("%s:%d", file, n)
}

// DialogTurn is a user message and the reply that follows it.
type DialogTurn struct {
	User  string
	Reply *string // nil when the dataset has none (the last user turn)
	// UserMessage is the user message when it is more than a string
	// (text parts, a name): User is then its last text part.
	UserMessage *records.Message
	// History is what follows the user message up to the next one when
	// it is more than one assistant text (tool calls, tool results,
	// names, reasoning, parts); Reply is then the last assistant text.
	History []records.Message
}

// ReadDataset reads a whole dataset. format "" or FormatAuto detects it:
// a JSON array is ShareGPT; a JSONL file by its first record's key
// (conversations, messages, prompt); anything else is plain text lines.
// A record of the wrong shape (not an object, a field of the wrong type,
// an unknown role) is an error naming the file, line and field; a
// well-formed dialog that cannot be replayed (it opens with a reply, roles
// out of order, media parts) is returned in skipped. OpenAI messages keep
// their shape (text parts, names, tool calls and results, reasoning,
// the line's tools): see DialogTurn.
func ReadDataset(r io.Reader, name, format string) (dialogs []Dialog, skipped []Skipped, detected string, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, nil, "", fmt.Errorf("%s: not UTF-8 text", name)
	}
	trimmed := bytes.TrimSpace(data)
	if err := notADataset(trimmed, name); err != nil {
		return nil, nil, "", err
	}
	if format == "" || format == FormatAuto {
		format = detect(trimmed)
	}
	switch format {
	case FormatShareGPT:
		if len(trimmed) > 0 && trimmed[0] == '[' {
			dialogs, skipped, err = readShareGPTArray(trimmed, name)
		} else {
			dialogs, skipped, err = readLines(data, name, shareGPTLine)
		}
	case FormatOpenAI:
		dialogs, skipped, err = readLines(data, name, openAILine)
	case FormatPrompts:
		if len(trimmed) > 0 && trimmed[0] == '{' {
			dialogs, skipped, err = readLines(data, name, promptLine)
		} else {
			dialogs, err = readText(data, name)
		}
	default:
		return nil, nil, "", fmt.Errorf("--dataset-format %q: want %s, %s, %s or %s", format, FormatAuto, FormatShareGPT, FormatOpenAI, FormatPrompts)
	}
	if err == nil && len(dialogs) == 0 && len(skipped) == 0 {
		err = fmt.Errorf("%s: no conversations", name)
	}
	return dialogs, skipped, format, err
}

// kindRe finds an islkit record's kind at the start of a file (a pretty
// summary's first line is a lone "{").
var kindRe = regexp.MustCompile(`^\{\s*"kind"\s*:\s*"(islkit\.[a-z_]+)"`)

// notADataset refuses the output of islkit's own tools given as a
// dataset, saying what the file is and what to do with it instead (the
// format's own check would only say that a field is missing).
func notADataset(data []byte, name string) error {
	m := kindRe.FindSubmatch(data)
	if m == nil {
		return nil
	}
	var what string
	switch string(m[1]) {
	case records.KindProbe:
		what = "probe's output (an islkit.probe record): give it to compose on stdin or with --probe, and --dataset the dataset to replay"
	case records.KindConversation:
		what = "compose's output (islkit.conversation records): send it (send --dry-run or --url) rather than composing it again; --dataset takes a ShareGPT, OpenAI messages or prompts file"
	case records.KindRequest:
		what = "send's (or measure's) output (islkit.request records): measure it (measure FILE); to replay its requests, give --dataset the dataset they were composed from"
	case records.KindSummary:
		what = "measure's summary (--summary-json), not a dataset: compare it with measure --compare A.json B.json"
	default:
		what = fmt.Sprintf("an islkit record (kind %s), not a dataset", m[1])
	}
	return cli.Usagef("%s: this is %s", name, what) // the wrong file for the flag: exit 2
}

func detect(data []byte) string {
	switch {
	case len(data) > 0 && data[0] == '[':
		return FormatShareGPT
	case len(data) > 0 && data[0] == '{':
		first, _, _ := bytes.Cut(data, []byte("\n"))
		var keys map[string]json.RawMessage
		if json.Unmarshal(first, &keys) == nil {
			if _, ok := keys["conversations"]; ok {
				return FormatShareGPT
			}
			if _, ok := keys["messages"]; ok {
				return FormatOpenAI
			}
		}
	}
	return FormatPrompts
}

type lineFunc func(line jsonl.Line) (*Dialog, string, error)

func readLines(data []byte, name string, parse lineFunc) ([]Dialog, []Skipped, error) {
	jr := jsonl.NewReader(bytes.NewReader(data), name)
	var dialogs []Dialog
	var skipped []Skipped
	for {
		line, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return dialogs, skipped, nil
		}
		if err != nil {
			return nil, nil, err
		}
		d, why, err := parse(line)
		switch {
		case err != nil:
			return nil, nil, err
		case d == nil:
			skipped = append(skipped, Skipped{Line: line.Num, Reason: why})
		default:
			d.Line = line.Num
			dialogs = append(dialogs, *d)
		}
	}
}

func readShareGPTArray(data []byte, name string) ([]Dialog, []Skipped, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, nil, fmt.Errorf("%s: not a JSON array of conversations: %w", name, err)
	}
	var dialogs []Dialog
	var skipped []Skipped
	for i, e := range entries {
		line := jsonl.Line{File: name, Num: i + 1, Data: e}
		d, why, err := shareGPTLine(line)
		switch {
		case err != nil:
			return nil, nil, inArray(err)
		case d == nil:
			skipped = append(skipped, Skipped{Line: i + 1, InArray: true, Reason: why})
		default:
			d.Line, d.InArray = i+1, true
			dialogs = append(dialogs, *d)
		}
	}
	return dialogs, skipped, nil
}

// inArray rewords a record's error for a JSON array, whose records are
// not lines: "FILE: record N of the JSON array: field ...".
func inArray(err error) error {
	var le *jsonl.LineError
	if !errors.As(err, &le) {
		return err
	}
	msg := le.Err.Error()
	if le.Field != "" {
		msg = fmt.Sprintf("field %q: %s", le.Field, msg)
	}
	return fmt.Errorf("%s: %s", Where(le.File, le.Line, true), msg)
}

// message is one message of either format, in order: a role and a text
// content, and for OpenAI messages the message as given when it is more
// than that (rich).
type message struct {
	role, content string
	rich          *records.Message
}

// build turns messages into a dialog, or says why it cannot be replayed.
func build(msgs []message) (*Dialog, string) {
	d := &Dialog{}
	if len(msgs) > 0 && msgs[0].role == "system" {
		s := msgs[0].content
		if strings.TrimSpace(s) == "" {
			return nil, "an empty system message: skipped"
		}
		if r := msgs[0].rich; r != nil {
			if r.Parts == nil || r.Name != "" {
				return nil, "a system message with more than text: skipped"
			}
			d.SystemParts = r.Parts
		}
		d.System = &s
		msgs = msgs[1:]
	}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case m.role == "system":
			return nil, fmt.Sprintf("message %d: a system message after the first: skipped", i)
		case m.role != "user":
			return nil, fmt.Sprintf("message %d (%s) where a user turn belongs: skipped", i, m.role)
		}
		t := DialogTurn{User: m.content, UserMessage: m.rich}
		if m.rich != nil && len(m.rich.Parts) == 0 && m.rich.Content == nil {
			return nil, fmt.Sprintf("message %d: a user message without text: skipped", i)
		}
		// The reply: what follows up to the next user (or system) message.
		j := i + 1
		for j < len(msgs) && msgs[j].role != "user" && msgs[j].role != "system" {
			j++
		}
		if j == i+1 && j < len(msgs) {
			return nil, fmt.Sprintf("message %d (%s) right after a user turn: skipped", j, msgs[j].role)
		}
		if reply := msgs[i+1 : j]; len(reply) > 0 {
			if reply[0].role != "assistant" {
				return nil, fmt.Sprintf("message %d (%s) right after a user turn: skipped", i+1, reply[0].role)
			}
			r := ""
			for _, x := range reply {
				if x.role == "assistant" {
					r = x.content
				}
			}
			t.Reply = &r
			if len(reply) > 1 || reply[0].rich != nil {
				t.History = make([]records.Message, len(reply))
				for k, x := range reply {
					t.History[k] = x.record()
				}
			}
		}
		i = j - 1
		d.Turns = append(d.Turns, t)
	}
	if len(d.Turns) == 0 {
		return nil, "no user turn: skipped"
	}
	return d, ""
}

// record is m as a record message.
func (m message) record() records.Message {
	if m.rich != nil {
		return *m.rich
	}
	c := m.content
	return records.Message{Role: m.role, Content: &c}
}

func shareGPTLine(line jsonl.Line) (*Dialog, string, error) {
	var rec struct {
		Conversations *[]struct {
			From  *string `json:"from"`
			Value *string `json:"value"`
		} `json:"conversations"`
		System *string `json:"system"`
	}
	if err := line.Decode(&rec); err != nil {
		return nil, "", err
	}
	if rec.Conversations == nil {
		return nil, "", line.FieldErrorf("conversations", "missing (a list of {from, value})")
	}
	var msgs []message
	if rec.System != nil {
		msgs = append(msgs, message{role: "system", content: *rec.System})
	}
	for i, m := range *rec.Conversations {
		field := fmt.Sprintf("conversations.%d", i)
		if m.From == nil {
			return nil, "", line.FieldErrorf(field+".from", "missing")
		}
		if m.Value == nil {
			return nil, "", line.FieldErrorf(field+".value", "missing")
		}
		var role string
		switch strings.ToLower(*m.From) {
		case "human", "user":
			role = "user"
		case "gpt", "assistant", "chatgpt", "bard", "bing", "model":
			role = "assistant"
		case "system":
			role = "system"
		default:
			return nil, "", line.FieldErrorf(field+".from", "unknown speaker %q (want human/user, gpt/assistant or system)", *m.From)
		}
		msgs = append(msgs, message{role: role, content: *m.Value})
	}
	d, why := build(msgs)
	return d, why, nil
}

func openAILine(line jsonl.Line) (*Dialog, string, error) {
	var rec struct {
		Messages *[]struct {
			Role             *string          `json:"role"`
			Content          *json.RawMessage `json:"content"`
			Name             *string          `json:"name"`
			ToolCalls        json.RawMessage  `json:"tool_calls"`
			ToolCallID       *string          `json:"tool_call_id"`
			ReasoningContent *string          `json:"reasoning_content"`
			Reasoning        *string          `json:"reasoning"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := line.Decode(&rec); err != nil {
		return nil, "", err
	}
	if rec.Messages == nil {
		return nil, "", line.FieldErrorf("messages", "missing (a list of {role, content})")
	}
	var msgs []message
	for i, m := range *rec.Messages {
		field := fmt.Sprintf("messages.%d", i)
		if m.Role == nil {
			return nil, "", line.FieldErrorf(field+".role", "missing")
		}
		switch *m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return nil, "", line.FieldErrorf(field+".role", "unknown role %q", *m.Role)
		}
		role := *m.Role
		if role == "developer" {
			role = "system"
		}
		// The message as the dataset gave it; only a role and a string
		// content makes a plain message.
		rich := records.Message{Role: role, ToolCallID: deref(m.ToolCallID), Name: deref(m.Name)}
		if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
			if m.ToolCalls[0] != '[' {
				return nil, "", line.FieldErrorf(field+".tool_calls", "not a list")
			}
			rich.ToolCalls = append(json.RawMessage(nil), m.ToolCalls...)
		}
		switch {
		case m.ReasoningContent != nil:
			rich.ReasoningContent = *m.ReasoningContent
		case m.Reasoning != nil:
			rich.ReasoningContent = *m.Reasoning
		}
		var text string
		switch {
		case m.Content == nil || string(*m.Content) == "null":
		case json.Unmarshal(*m.Content, &text) == nil:
			rich.Content = &text
		default:
			var parts []struct {
				Type     string          `json:"type"`
				Text     *string         `json:"text"`
				ImageURL json.RawMessage `json:"image_url"`
			}
			if perr := json.Unmarshal(*m.Content, &parts); perr != nil {
				return nil, "", line.FieldErrorf(field+".content", "neither a string nor a list of content parts")
			}
			rich.Parts = make([]string, 0, len(parts))
			for k, p := range parts {
				if p.Type == "image_url" && role == "user" {
					// Kept as given: the URL is counted (its header read)
					// and sent as it is.
					u, detail, ok := imageURL(p.ImageURL)
					if !ok {
						return nil, fmt.Sprintf("message %d part %d: an image part without a URL: skipped", i, k), nil
					}
					if detail {
						return nil, fmt.Sprintf("message %d part %d: an image's detail is not replayed: skipped", i, k), nil
					}
					rich.Images = append(rich.Images, records.PartImage{At: k, URL: u})
					continue
				}
				if p.Type != "text" || p.Text == nil {
					return nil, fmt.Sprintf("message %d part %d: %q content is not replayed: skipped", i, k, p.Type), nil
				}
				rich.Parts = append(rich.Parts, *p.Text)
			}
			if len(rich.Images) > 0 && len(rich.Parts) == 0 {
				return nil, fmt.Sprintf("message %d: images without a text part, whose text a turn is sized by: skipped", i), nil
			}
			if len(rich.Parts) > 0 {
				text = rich.Parts[len(rich.Parts)-1]
			}
			if role == "system" {
				text = strings.Join(rich.Parts, "")
			}
		}
		msg := message{role: role, content: text}
		if rich.Content == nil || rich.Name != "" || rich.ToolCalls != nil || rich.ToolCallID != "" || rich.ReasoningContent != "" || role == "tool" {
			msg.rich = &rich
		}
		msgs = append(msgs, msg)
	}
	d, why := build(msgs)
	if d != nil && len(rec.Tools) > 0 && string(rec.Tools) != "null" {
		if rec.Tools[0] != '[' {
			return nil, "", line.FieldErrorf("tools", "not a list")
		}
		d.Tools = append(json.RawMessage(nil), rec.Tools...)
	}
	return d, why, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func promptLine(line jsonl.Line) (*Dialog, string, error) {
	var rec struct {
		Prompt *string `json:"prompt"`
	}
	if err := line.Decode(&rec); err != nil {
		return nil, "", err
	}
	if rec.Prompt == nil {
		return nil, "", line.FieldErrorf("prompt", "missing")
	}
	return &Dialog{Turns: []DialogTurn{{User: *rec.Prompt}}}, "", nil
}

// readText makes one single-turn dialog per non-blank line.
func readText(data []byte, name string) ([]Dialog, error) {
	var dialogs []Dialog
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		dialogs = append(dialogs, Dialog{Line: n, Turns: []DialogTurn{{User: text}}})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return dialogs, nil
}

// imageURL is an image_url part's URL: {"url": ...} or a bare string;
// detail says the part has a "detail", which is not replayed.
func imageURL(raw json.RawMessage) (url string, detail, ok bool) {
	if json.Unmarshal(raw, &url) == nil && url != "" {
		return url, false, true
	}
	var o struct {
		URL    string  `json:"url"`
		Detail *string `json:"detail"`
	}
	if json.Unmarshal(raw, &o) == nil && o.URL != "" {
		return o.URL, o.Detail != nil, true
	}
	return "", false, false
}
