package extract

import (
	"bytes"
	"fmt"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonobj"
)

// Prompt is one prompt of a completions body: text, or token ids (IDs
// set, Text empty).
type Prompt struct {
	Text string
	IDs  []int
	// Tokens is true for a token-id prompt (IDs may then be empty).
	Tokens bool
}

// Item is one element of a Responses body's "input" list.
type Item struct {
	Index int
	// Type is the item's "type" ("" when absent: a message); Role its
	// "role" when that is a string (HasRole).
	Type    string
	Role    string
	HasRole bool
	// Parts are the texts of its content: the string content, or the
	// input_text / output_text parts of list content (AIPerf's
	// PART_TYPES for the Responses API); StringContent when the content
	// is a JSON string.
	Parts         []string
	StringContent bool
	// Fields are all its members, for the server profiles' conversions.
	Fields jsonobj.Object
}

// completions reads a completions body: "prompt" as a string, a list of
// strings, a list of token ids or a list of token-id lists (vLLM's
// CompletionRequest.prompt; AIPerf's _append_string_or_list).
func completions(obj jsonobj.Object, raw json.RawMessage) (*Inputs, error) {
	ex := &Inputs{Endpoint: endpoint.Completions, Body: obj}
	bad := fmt.Errorf(`payload: "prompt" must be a string, a list of strings, a list of token ids or a list of token-id lists`)
	t := bytes.TrimSpace(raw)
	switch t[0] {
	case '"':
		s, err := jsonobj.String(t)
		if err != nil {
			return nil, fmt.Errorf(`payload: "prompt": %w`, err)
		}
		ex.Prompts = []Prompt{{Text: s}}
	case '[':
		elems, err := jsonobj.Elements(t)
		if err != nil {
			return nil, bad
		}
		if len(elems) == 0 {
			break // AIPerf: a list of no strings; vLLM refuses it
		}
		first := bytes.TrimSpace(elems[0])
		switch {
		case first[0] == '"':
			for i, e := range elems {
				if !jsonobj.IsString(e) {
					return nil, fmt.Errorf(`payload: "prompt"[%d] is not a string (a list prompt is all strings or all token ids)`, i)
				}
				s, err := jsonobj.String(bytes.TrimSpace(e))
				if err != nil {
					return nil, fmt.Errorf(`payload: "prompt"[%d]: %w`, i, err)
				}
				ex.Prompts = append(ex.Prompts, Prompt{Text: s})
			}
		case first[0] == '[':
			for i, e := range elems {
				ids, err := tokenIDs(e)
				if err != nil {
					return nil, fmt.Errorf(`payload: "prompt"[%d]: %w`, i, err)
				}
				ex.Prompts = append(ex.Prompts, Prompt{IDs: ids, Tokens: true})
			}
		default:
			ids, err := tokenIDs(t)
			if err != nil {
				return nil, fmt.Errorf(`payload: "prompt": %w`, err)
			}
			ex.Prompts = []Prompt{{IDs: ids, Tokens: true}}
		}
	default:
		return nil, bad
	}
	for _, p := range ex.Prompts {
		if p.Tokens {
			ex.Pretokenised += len(p.IDs)
		} else {
			ex.Texts = append(ex.Texts, p.Text)
		}
	}
	if err := ex.topLevel(obj); err != nil {
		return nil, err
	}
	return ex, nil
}

// tokenIDs reads a list of token ids (JSON integers).
func tokenIDs(raw json.RawMessage) ([]int, error) {
	elems, err := jsonobj.Elements(raw)
	if err != nil {
		return nil, fmt.Errorf("not a list of token ids")
	}
	ids := make([]int, len(elems))
	for i, e := range elems {
		n, err := strconv.Atoi(string(bytes.TrimSpace(e)))
		if err != nil {
			return nil, fmt.Errorf("[%d] is not a token id (an integer)", i)
		}
		ids[i] = n
	}
	return ids, nil
}

// responses reads a Responses API body: "instructions" (a string) and
// "input", a string or a list of items. The chat view follows AIPerf's
// ResponsesEndpoint.extract_payload_inputs: a system message with the
// instructions, then every item with a string role, its input_text and
// output_text parts joined with ""; function_call names and arguments and
// function_call_output outputs are tool texts, as AIPerf counts them.
func responses(obj jsonobj.Object, raw json.RawMessage) (*Inputs, error) {
	ex := &Inputs{Endpoint: endpoint.Responses, Body: obj}
	if ins, _ := obj.Get("instructions"); !isNull(ins) {
		if !jsonobj.IsString(ins) {
			return nil, fmt.Errorf(`payload: "instructions" is not a string`)
		}
		s, err := jsonobj.String(bytes.TrimSpace(ins))
		if err != nil {
			return nil, fmt.Errorf(`payload: "instructions": %w`, err)
		}
		ex.Instructions, ex.HasInstructions = s, true
		ex.Texts = append(ex.Texts, s)
		ex.Chat = append(ex.Chat, synthetic("system", ins, -1))
	}
	t := bytes.TrimSpace(raw)
	switch t[0] {
	case '"':
		s, err := jsonobj.String(t)
		if err != nil {
			return nil, fmt.Errorf(`payload: "input": %w`, err)
		}
		ex.InputText, ex.StringInput = s, true
		ex.Texts = append(ex.Texts, s)
		ex.Chat = append(ex.Chat, synthetic("user", t, 0))
	case '[':
		elems, err := jsonobj.Elements(t)
		if err != nil {
			return nil, fmt.Errorf(`payload: "input" is neither a string nor a list of items`)
		}
		for i, e := range elems {
			it, err := decodeItem(i, e)
			if err != nil {
				return nil, err
			}
			ex.Items = append(ex.Items, it)
			ex.addItem(&it)
		}
	default:
		return nil, fmt.Errorf(`payload: "input" is neither a string nor a list of items`)
	}
	ex.RawMessages = len(ex.Chat)
	if err := ex.topLevel(obj); err != nil {
		return nil, err
	}
	return ex, nil
}

// synthetic is a chat-view message made from a request member (the
// instructions, a string input): role and the raw string content.
func synthetic(role string, content json.RawMessage, index int) Message {
	s, _ := jsonobj.String(bytes.TrimSpace(content))
	r, _ := json.Marshal(role)
	return Message{Role: role, Parts: []string{s}, Index: index, StringContent: true,
		Fields: jsonobj.Object{{Key: "role", Value: r}, {Key: "content", Value: content}}}
}

// decodeItem reads one input item: an object, whose content (when there
// is one) is a string or a list of parts.
func decodeItem(i int, raw json.RawMessage) (Item, error) {
	obj, err := jsonobj.Members(raw)
	if err != nil || isNull(raw) {
		return Item{}, fmt.Errorf("payload: input[%d] is not an object", i)
	}
	it := Item{Index: i, Fields: obj}
	if v, ok := obj.Get("type"); ok && jsonobj.IsString(v) {
		if it.Type, err = jsonobj.String(bytes.TrimSpace(v)); err != nil {
			return Item{}, fmt.Errorf("payload: input[%d].type: %w", i, err)
		}
	}
	if v, ok := obj.Get("role"); ok && jsonobj.IsString(v) {
		if it.Role, err = jsonobj.String(bytes.TrimSpace(v)); err != nil {
			return Item{}, fmt.Errorf("payload: input[%d].role: %w", i, err)
		}
		it.HasRole = true
	}
	return it, nil
}

// addItem adds an item's texts, media and chat-view message.
func (ex *Inputs) addItem(it *Item) {
	c, _ := it.Fields.Get("content")
	switch c = bytes.TrimSpace(c); {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		if s, err := jsonobj.String(c); err == nil {
			it.Parts, it.StringContent = []string{s}, true
		}
	case c[0] == '[':
		ps, _ := jsonobj.Elements(c)
		for _, pr := range ps {
			p, ok := decodePart(pr)
			if !ok {
				continue
			}
			switch p.Type {
			case "input_text", "output_text":
				if s, ok := p.text(); ok && jsonobj.IsString(p.Text) {
					it.Parts = append(it.Parts, s)
				}
			case "input_image":
				ex.Media.Images++
			case "input_audio":
				ex.Media.Audios++
			}
		}
	}
	ex.Texts = append(ex.Texts, it.Parts...)
	if len(it.Parts) > 1 {
		ex.MultiTextParts = true
	}
	tc, _ := it.Fields.Get("tool_calls")
	if it.HasRole {
		ex.Texts = append(ex.Texts, toolCallTexts(tc)...)
	} else {
		calls := toolCallTexts(tc)
		ex.Texts = append(ex.Texts, calls...)
		ex.ToolTexts = append(ex.ToolTexts, calls...)
	}
	var fn []string
	switch it.Type {
	case "function_call":
		fn = nonEmptyStrings(it.Fields, "name", "arguments")
	case "function_call_output":
		fn = nonEmptyStrings(it.Fields, "output")
	}
	ex.Texts = append(ex.Texts, fn...)
	ex.ToolTexts = append(ex.ToolTexts, fn...)
	if it.HasRole {
		m := Message{Role: it.Role, Parts: it.Parts, Index: it.Index, Fields: it.Fields, StringContent: it.StringContent}
		if bytes.HasPrefix(bytes.TrimSpace(tc), []byte("[")) && !bytes.Equal(bytes.TrimSpace(tc), []byte("[]")) {
			m.ToolCalls = tc
		}
		ex.Chat = append(ex.Chat, m)
	}
}

// nonEmptyStrings are the members of keys that are non-empty strings
// (AIPerf's _collect_str_fields).
func nonEmptyStrings(obj jsonobj.Object, keys ...string) []string {
	var out []string
	for _, k := range keys {
		v, ok := obj.Get(k)
		if !ok || !jsonobj.IsString(v) {
			continue
		}
		if s, err := jsonobj.String(bytes.TrimSpace(v)); err == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}
