package serverprofile

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// The endpoints other than chat (docs/reference/server-preprocessing.md
// §2 and §3 for vLLM). What each profile does:
//
//   - /v1/completions: no chat template. vLLM encodes each text prompt
//     with add_special_tokens (the request field, default True: a BOS where
//     the tokenizer's post-processor adds one), takes token-id prompts as
//     given, and reports a list of prompts as the sum (§2). SGLang hands
//     strings to the HF tokenizer with its defaults (special tokens added)
//     and token ids as input_ids (§5, UNVERIFIED there); transformers'
//     tokenizer(prompt) adds special tokens by default: both count as vLLM
//     does. AIPerf counts what extract_inputs finds: the texts joined by
//     " " and encoded without special tokens, plus the token ids.
//   - /v1/responses: the body becomes a chat request, then the chat rules
//     apply. vLLM: construct_input_messages (responses/utils.py @01ca842d):
//     non-empty instructions → a system message, a string input → a user
//     message, items → messages (function_call → assistant tool_calls
//     merged into the assistant message before it, function_call_output →
//     a tool message, reasoning → assistant reasoning, an assistant
//     message → its first text part, other items as given); flat function
//     tools → chat tools (construct_tool_dicts); reasoning.effort →
//     reasoning_effort; a last message or reasoning item in_progress or
//     incomplete is continued (continue_final_message); encoded WITH
//     special tokens (§3: build_tok_params leaves add_special_tokens at
//     True, so a BOS-adding tokenizer doubles a template's BOS). SGLang's
//     serving_responses.py (adapted from vLLM's) builds the same messages
//     and a ChatCompletionRequest of model and messages only: no tools, no
//     reasoning effort, chat encoding (no special tokens); its item
//     conversion is taken to be vLLM's (UNVERIFIED), and input_text /
//     output_text parts are read as text parts. transformers has no
//     Responses server: the profile renders the same messages as vLLM with
//     the converted tools, without special tokens. AIPerf templates its own
//     view (ResponsesEndpoint.extract_payload_inputs: the instructions as a
//     system message, every item with a role, input_text and output_text
//     parts joined by "") and counts function calls, their outputs and the
//     tools bare on top; a string input is not a message list to AIPerf,
//     so it is counted bare (instructions and input joined by " ").

// Templated reports whether p's server renders ex through the chat
// template (otherwise CountCompletions, or the bare count for AIPerf, is
// the server's count).
func Templated(p Profile, ex *extract.Inputs) bool {
	switch ex.Endpoint {
	case endpoint.Completions:
		return false
	case endpoint.Responses:
		return p != AIPerf || !ex.StringInput
	}
	return ex.Chat != nil
}

// Encoder encodes text (*tokenizer.Tokenizer).
type Encoder interface {
	Counter
	Encode(string) []int
	EncodeWithSpecialTokens(string) []int
}

// CompletionsAddSpecialTokens is whether p's server encodes a completions
// text prompt with special tokens.
func CompletionsAddSpecialTokens(p Profile, ex *extract.Inputs) (bool, error) {
	switch p {
	case AIPerf:
		return false, nil
	case VLLM:
		// §2: add_special_tokens: bool = Field(default=True)
		// (completion/protocol.py @002032ee).
		v, err := optBool(ex.Body, "add_special_tokens")
		if err != nil || v == nil {
			return true, err
		}
		return *v, nil
	}
	return true, nil
}

// CountCompletions is the prompt_tokens p's server reports for a
// completions body.
func CountCompletions(p Profile, ex *extract.Inputs, tok Counter) (int, error) {
	if ex.Endpoint != endpoint.Completions {
		return 0, fmt.Errorf("not a completions body")
	}
	special, err := CompletionsAddSpecialTokens(p, ex)
	if err != nil {
		return 0, err
	}
	if p == AIPerf {
		// _compute_input_token_count's bare path: " ".join(texts),
		// add_special_tokens=False, + pretokenised_token_count.
		n := ex.Pretokenised
		if len(ex.Texts) > 0 {
			n += tok.Count(strings.Join(ex.Texts, " "))
		}
		return n, nil
	}
	n := 0
	for _, pr := range ex.Prompts {
		if pr.Tokens {
			n += len(pr.IDs) // §2: token ids are used as given
			continue
		}
		n += tok.Count(pr.Text)
		if special {
			n += tok.NumSpecialTokensToAdd(false)
		}
	}
	return n, nil
}

// CompletionsIDs is each prompt's token ids as p's server runs it (one
// engine request per prompt), for a prefix cache.
func CompletionsIDs(p Profile, ex *extract.Inputs, tok Encoder) ([][]int, error) {
	special, err := CompletionsAddSpecialTokens(p, ex)
	if err != nil {
		return nil, err
	}
	out := make([][]int, len(ex.Prompts))
	for i, pr := range ex.Prompts {
		switch {
		case pr.Tokens:
			out[i] = pr.IDs
		case special:
			out[i] = tok.EncodeWithSpecialTokens(pr.Text)
		default:
			out[i] = tok.Encode(pr.Text)
		}
	}
	return out, nil
}

// responsesAsChat is a Responses body as the chat request p's server
// makes of it (see the comment at the top of this file), read back as a
// chat body so that the chat rules apply unchanged.
func responsesAsChat(p Profile, ex *extract.Inputs) (*extract.Inputs, error) {
	var msgs []jsonobj.Object
	if ex.HasInstructions && ex.Instructions != "" { // "if request_instructions:"
		ins, _ := ex.Body.Get("instructions")
		msgs = append(msgs, jsonobj.Object{{Key: "role", Value: rawString("system")}, {Key: "content", Value: ins}})
	}
	if ex.StringInput {
		in, _ := ex.Body.Get("input")
		msgs = append(msgs, jsonobj.Object{{Key: "role", Value: rawString("user")}, {Key: "content", Value: in}})
	}
	for i := range ex.Items {
		var err error
		if msgs, err = appendItem(p, msgs, &ex.Items[i]); err != nil {
			return nil, err
		}
	}
	body := jsonobj.Object{{Key: "messages", Value: marshalObjects(msgs)}}
	if p != SGLang {
		if tools := responsesTools(ex.Body); tools != nil {
			body = append(body, jsonobj.Member{Key: "tools", Value: tools})
		}
	}
	if p == VLLM {
		if r := member(ex.Body, "reasoning"); r != nil {
			if ro, err := jsonobj.Members(r); err == nil {
				if e := member(ro, "effort"); e != nil && isString(e) {
					body = append(body, jsonobj.Member{Key: "reasoning_effort", Value: e})
				}
			}
		}
		// §3: ResponsesRequest.build_tok_params leaves add_special_tokens
		// at the TokenizeParams default, True (params.py @017638d7).
		body = append(body, jsonobj.Member{Key: "add_special_tokens", Value: json.RawMessage("true")})
	}
	if p != SGLang && continueFinal(ex.Items) {
		// should_continue_final_message (responses/utils.py @01ca842d);
		// responses/protocol.py @010a69ce: add_generation_prompt = not
		// continue_final.
		body = append(body, jsonobj.Member{Key: "add_generation_prompt", Value: json.RawMessage("false")},
			jsonobj.Member{Key: "continue_final_message", Value: json.RawMessage("true")})
	}
	chatEx, err := extract.Object(body)
	if err != nil {
		return nil, fmt.Errorf("responses input as chat messages: %w", err)
	}
	chatEx.Texts, chatEx.ToolTexts, chatEx.Media = ex.Texts, ex.ToolTexts, ex.Media
	return chatEx, nil
}

// appendItem is _construct_message_from_response_item for one item.
func appendItem(p Profile, msgs []jsonobj.Object, it *extract.Item) ([]jsonobj.Object, error) {
	var prev jsonobj.Object // the previous message when it is the assistant's
	if n := len(msgs); n > 0 {
		if r, _ := str(member(msgs[n-1], "role")); r == "assistant" {
			prev = msgs[n-1]
		}
	}
	setPrev := func(o jsonobj.Object) []jsonobj.Object {
		msgs[len(msgs)-1] = o
		return msgs
	}
	f := it.Fields
	switch {
	case it.Type == "function_call":
		name, _ := f.Get("name")
		args, _ := f.Get("arguments")
		id, _ := f.Get("call_id")
		call := jsonobj.Object{{Key: "id", Value: orNull(id)},
			{Key: "function", Value: jsonobj.Object{{Key: "name", Value: orNull(name)}, {Key: "arguments", Value: orNull(args)}}.Marshal()},
			{Key: "type", Value: rawString("function")}}
		if prev != nil {
			calls := member(prev, "tool_calls")
			if calls == nil {
				o, _ := prev.Set("tool_calls", json.RawMessage(marshalObjects([]jsonobj.Object{call})))
				return setPrev(o), nil
			}
			if elems, err := jsonobj.Elements(calls); err == nil {
				elems = append(elems, call.Marshal())
				o, _ := prev.Set("tool_calls", json.RawMessage(joinArray(elems)))
				return setPrev(o), nil
			}
		}
		return append(msgs, jsonobj.Object{{Key: "role", Value: rawString("assistant")},
			{Key: "tool_calls", Value: marshalObjects([]jsonobj.Object{call})}}), nil
	case it.Type == "reasoning":
		if enc := member(f, "encrypted_content"); enc != nil {
			return nil, refuse(p, "encrypted reasoning content is not supported", "input[%d]", it.Index)
		}
		text := rawString("")
		if t := firstText(member(f, "content")); t != nil {
			text = t
		} else if t := firstText(member(f, "summary")); t != nil {
			text = t
		}
		if prev != nil && member(prev, "reasoning") == nil {
			o, _ := prev.Set("reasoning", text)
			return setPrev(o), nil
		}
		return append(msgs, jsonobj.Object{{Key: "role", Value: rawString("assistant")}, {Key: "reasoning", Value: text}}), nil
	case it.Type == "function_call_output":
		out, _ := f.Get("output")
		id, _ := f.Get("call_id")
		return append(msgs, jsonobj.Object{{Key: "role", Value: rawString("tool")}, {Key: "content", Value: orNull(out)}, {Key: "tool_call_id", Value: orNull(id)}}), nil
	case it.HasRole && it.Role == "assistant":
		text := rawString("")
		c := member(f, "content")
		switch {
		case c != nil && isString(c):
			text = c
		case c != nil:
			if t := firstText(c); t != nil {
				text = t
			}
		}
		if prev != nil && member(prev, "content") == nil {
			o, _ := prev.Set("content", text)
			return setPrev(o), nil
		}
		return append(msgs, jsonobj.Object{{Key: "role", Value: rawString("assistant")}, {Key: "content", Value: text}}), nil
	}
	// Other items pass through as given (a user, system or developer
	// message, its input_text parts read as text).
	if p != VLLM {
		return append(msgs, textParts(f)), nil
	}
	return append(msgs, f), nil
}

// firstText is the text of a list's first element: its "text" (default
// "") when it is an object, the element itself otherwise; nil for an
// empty or absent list.
func firstText(raw json.RawMessage) json.RawMessage {
	elems, err := jsonobj.Elements(raw)
	if raw == nil || err != nil || len(elems) == 0 {
		return nil
	}
	if obj, err := jsonobj.Members(elems[0]); err == nil && !isNull(elems[0]) {
		if t, ok := obj.Get("text"); ok {
			return t
		}
		return rawString("")
	}
	return elems[0]
}

// textParts rewrites input_text and output_text parts as chat "text"
// parts, for the profiles whose chat rules read only "text".
func textParts(f jsonobj.Object) jsonobj.Object {
	c := member(f, "content")
	if c == nil || isString(c) {
		return f
	}
	elems, err := jsonobj.Elements(c)
	if err != nil {
		return f
	}
	for i, e := range elems {
		po, err := jsonobj.Members(e)
		if err != nil || isNull(e) {
			continue
		}
		if t, _ := str(member(po, "type")); t == "input_text" || t == "output_text" {
			po, _ = po.Set("type", "text")
			elems[i] = po.Marshal()
		}
	}
	out := append(jsonobj.Object{}, f...)
	out, _ = out.Set("content", json.RawMessage(joinArray(elems)))
	return out
}

// responsesTools converts the flat Responses function tools to chat tools
// (convert_tool_responses_to_completions_format); nil when there are none
// (construct_tool_dicts: "if not tools: return None").
func responsesTools(body jsonobj.Object) json.RawMessage {
	raw := member(body, "tools")
	elems, err := jsonobj.Elements(raw)
	if raw == nil || err != nil {
		return nil
	}
	var out []jsonobj.Object
	for _, e := range elems {
		obj, err := jsonobj.Members(e)
		if err != nil || isNull(e) {
			continue
		}
		if t, _ := str(member(obj, "type")); t != "function" {
			continue // built-in tools (web_search, ...) are not rendered
		}
		if member(obj, "function") != nil {
			out = append(out, obj) // already chat-shaped
			continue
		}
		fn := make(jsonobj.Object, 0, len(obj))
		for _, m := range obj {
			if m.Key != "type" {
				fn = append(fn, m)
			}
		}
		out = append(out, jsonobj.Object{{Key: "type", Value: rawString("function")}, {Key: "function", Value: fn.Marshal()}})
	}
	if len(out) == 0 {
		return nil
	}
	return marshalObjects(out)
}

// continueFinal is should_continue_final_message for an items input.
func continueFinal(items []extract.Item) bool {
	if len(items) == 0 {
		return false
	}
	last := items[len(items)-1]
	typ := last.Type
	if _, ok := last.Fields.Get("type"); !ok {
		typ = "message"
	}
	if typ != "message" && typ != "reasoning" {
		return false
	}
	s, _ := str(member(last.Fields, "status"))
	return s == "in_progress" || s == "incomplete"
}

func rawString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func marshalObjects(objs []jsonobj.Object) json.RawMessage {
	elems := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		elems[i] = o.Marshal()
	}
	return joinArray(elems)
}

func joinArray(elems []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// CountRequest is the prompt_tokens (input_tokens for responses) p's
// server reports for a body of any endpoint: completions counted as
// CountCompletions (a list of prompts is their sum), the rest as Render
// makes them. The test server, measure and probe --verify-url count
// through it.
func CountRequest(p Profile, ex *extract.Inputs, t *chat.Template, tok Counter, now time.Time) (int, error) {
	n, _, err := CountRequestVision(p, ex, t, nil, tok, now)
	return n, err
}

// CountRequestVision is CountRequest for a model that takes images
// (RenderVision), with each image's tokens (Prompt.ImageTokens).
func CountRequestVision(p Profile, ex *extract.Inputs, t *chat.Template, vis *Vision, tok Counter, now time.Time) (int, []int, error) {
	if ex.Endpoint == endpoint.Completions {
		n, err := CountCompletions(p, ex, tok)
		return n, nil, err
	}
	pr, err := RenderVision(p, ex, t, vis, now, nil)
	if err != nil {
		return 0, nil, err
	}
	return pr.Count(tok), pr.ImageTokens(tok), nil
}

// PromptIDs is the token ids of each engine request p's server runs for
// ex (one per completions prompt; one for chat and responses), for a
// prefix cache.
func PromptIDs(p Profile, ex *extract.Inputs, t *chat.Template, tok Encoder, now time.Time) ([][]int, error) {
	return PromptIDsVision(p, ex, t, nil, tok, now)
}

// PromptIDsVision is PromptIDs for a model that takes images: the ids
// with every image placeholder expanded.
func PromptIDsVision(p Profile, ex *extract.Inputs, t *chat.Template, vis *Vision, tok Encoder, now time.Time) ([][]int, error) {
	if ex.Endpoint == endpoint.Completions {
		return CompletionsIDs(p, ex, tok)
	}
	pr, err := RenderVision(p, ex, t, vis, now, nil)
	if err != nil {
		return nil, err
	}
	return [][]int{pr.IDs(tok)}, nil
}
