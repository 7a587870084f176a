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
	Turns   []DialogTurn
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
}

// ReadDataset reads a whole dataset. format "" or FormatAuto detects it:
// a JSON array is ShareGPT; a JSONL file by its first record's key
// (conversations, messages, prompt); anything else is plain text lines.
// A record of the wrong shape (not an object, a field of the wrong type,
// an unknown role) is an error naming the file, line and field; a
// well-formed dialog that cannot be replayed (it opens with a reply, roles
// out of order, tool calls) is returned in skipped.
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

// message is one message of either format, in order.
type message struct{ role, content string }

// build turns messages into a dialog, or says why it cannot be replayed.
func build(msgs []message) (*Dialog, string) {
	d := &Dialog{}
	if len(msgs) > 0 && msgs[0].role == "system" {
		s := msgs[0].content
		if strings.TrimSpace(s) == "" {
			return nil, "an empty system message: skipped"
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
		t := DialogTurn{User: m.content}
		if i+1 < len(msgs) {
			if next := msgs[i+1]; next.role != "assistant" {
				return nil, fmt.Sprintf("message %d (%s) right after a user turn: skipped", i+1, next.role)
			}
			r := msgs[i+1].content
			t.Reply = &r
			i++
		}
		d.Turns = append(d.Turns, t)
	}
	if len(d.Turns) == 0 {
		return nil, "no user turn: skipped"
	}
	return d, ""
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
		msgs = append(msgs, message{"system", *rec.System})
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
		msgs = append(msgs, message{role, *m.Value})
	}
	d, why := build(msgs)
	return d, why, nil
}

func openAILine(line jsonl.Line) (*Dialog, string, error) {
	var rec struct {
		Messages *[]struct {
			Role    *string          `json:"role"`
			Content *json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := line.Decode(&rec); err != nil {
		return nil, "", err
	}
	if rec.Messages == nil {
		return nil, "", line.FieldErrorf("messages", "missing (a list of {role, content})")
	}
	if len(rec.Tools) > 0 && string(rec.Tools) != "null" {
		// send does not put tools on the wire yet: the request would not be
		// the dataset's.
		return nil, "tools are not replayed yet: skipped", nil
	}
	var msgs []message
	for i, m := range *rec.Messages {
		field := fmt.Sprintf("messages.%d", i)
		if m.Role == nil {
			return nil, "", line.FieldErrorf(field+".role", "missing")
		}
		switch *m.Role {
		case "system", "developer", "user", "assistant":
		case "tool":
			return nil, fmt.Sprintf("message %d: tool results are not replayed yet: skipped", i), nil
		default:
			return nil, "", line.FieldErrorf(field+".role", "unknown role %q", *m.Role)
		}
		role := *m.Role
		if role == "developer" {
			role = "system"
		}
		var text string
		if m.Content != nil {
			if err := json.Unmarshal(*m.Content, &text); err != nil {
				var parts []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				}
				if perr := json.Unmarshal(*m.Content, &parts); perr != nil {
					return nil, "", line.FieldErrorf(field+".content", "neither a string nor a list of content parts")
				}
				var sb strings.Builder
				for k, p := range parts {
					if p.Type != "text" {
						return nil, fmt.Sprintf("message %d part %d: %q content is not replayed: skipped", i, k, p.Type), nil
					}
					sb.WriteString(p.Text)
				}
				text = sb.String()
			}
		}
		msgs = append(msgs, message{role, text})
	}
	d, why := build(msgs)
	return d, why, nil
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
