// Package serverprofile turns an OpenAI chat-completions body into what a
// given server hands its chat template and tokenizer (a Responses body
// first into the chat request that server makes of it, a completions
// body into its prompts' counts: endpoints.go): the messages
// (content shaped, keys kept or dropped, tool-call arguments parsed), the
// tools, the template kwargs, add_generation_prompt and
// continue_final_message, and whether the rendered prompt is encoded with
// special tokens. Each rule names the section of
// docs/reference/server-preprocessing.md ("§1.2") and the source file
// it was read from.
//
// A profile is a choice of server for each of a fixed list of rule
// families (Axes): the four profiles choose one server throughout, and a
// gap between two profiles is explained by switching one family at a time
// (Compare).
package serverprofile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
)

// Profile names a server whose preprocessing is reproduced.
type Profile string

// The profiles.
const (
	// VLLM is vLLM main (the renderer era; §1 of the reference).
	VLLM Profile = "vllm"
	// SGLang is SGLang main (§5).
	SGLang Profile = "sglang"
	// Transformers is apply_chat_template on the messages as given, list
	// content reduced to its text parts joined with "" (what a Python user
	// gets for text-only counting; the golden wire reference's rule).
	Transformers Profile = "transformers"
	// AIPerf is what AIPerf's record processor counts
	// (aiperf-behaviour.md §6): the chat view (role, text parts joined
	// with "", tool calls), add_generation_prompt=True, no kwargs, tools
	// not passed but their texts counted bare on top.
	AIPerf Profile = "aiperf"
)

// Default is the profile used when none is chosen.
const Default = VLLM

// Names lists the profiles, default first.
func Names() []string {
	return []string{string(VLLM), string(SGLang), string(Transformers), string(AIPerf)}
}

// BuildsTokenizerAsTransformers5 says whether the server loads a model's
// tokenizer through transformers 5, which rebuilds a Llama-class one
// (modelsrc.Source.AsTransformers5): vLLM 0.32 requires
// transformers>=5.16.1,<5.20, and SGLang 0.5.23 was counted on 5.19
// (testdata/sglang/expectations.jsonl.gz: 797 bodies, the Mistral 7B ones
// equal only when it is followed).
func (p Profile) BuildsTokenizerAsTransformers5() bool { return p == VLLM || p == SGLang }

// Parse reads a --server value ("" is Default).
func Parse(s string) (Profile, error) {
	if s == "" {
		return Default, nil
	}
	for _, n := range Names() {
		if s == n {
			return Profile(s), nil
		}
	}
	if slices.Contains(outputOnly, s) {
		return "", outputOnlyRefusal(s)
	}
	return "", fmt.Errorf("unknown server profile %q (want one of %s)", s, strings.Join(Names(), ", "))
}

// Axis is a family of rules in which servers differ. Its name is the gap
// cause a difference in it is reported under.
type Axis int

// The rule families, in the order Compare switches them.
const (
	// AxisParts: list content shaped into a string (parts joined by "\n",
	// " " or "") or kept as a list, after the server's content-format
	// detection; media and unknown parts.
	AxisParts Axis = iota
	// AxisNull: content null or absent.
	AxisNull
	// AxisToolArgs: assistant tool-call arguments kept as JSON strings or
	// parsed into objects (invalid JSON → {} or refused).
	AxisToolArgs
	// AxisReasoning: reasoning / reasoning_content on messages.
	AxisReasoning
	// AxisKeys: which other message keys survive (name, tool_call_id, ...).
	AxisKeys
	// AxisTools: the request's tools: normalised, filtered by
	// tool_choice, passed as given, or not passed at all.
	AxisTools
	// AxisPrompt: add_generation_prompt and continue_final_message, and
	// SGLang's rewrite of a final assistant message.
	AxisPrompt
	// AxisKwargs: chat_template_kwargs, documents, reasoning_effort.
	AxisKwargs
	// AxisSpecial: whether the rendered prompt is encoded with special
	// tokens (a BOS on top of the template's).
	AxisSpecial
	numAxes
)

// Cause names, one per axis (records.Cause values).
var axisCause = [numAxes]string{
	AxisParts:     "content_part_join",
	AxisNull:      "null_content",
	AxisToolArgs:  "tool_call_arguments",
	AxisReasoning: "reasoning",
	AxisKeys:      "message_keys",
	AxisTools:     "tools",
	AxisPrompt:    "generation_prompt",
	AxisKwargs:    "template_kwargs",
	AxisSpecial:   "special_tokens",
}

// Cause is the gap cause for differences in a.
func (a Axis) Cause() string { return axisCause[a] }

// Causes lists every axis cause, in axis order.
func Causes() []string { return axisCause[:] }

// Rules says, for each axis, whose rule applies.
type Rules [numAxes]Profile

// RulesOf is p's rules: p on every axis.
func RulesOf(p Profile) Rules {
	var r Rules
	for i := range r {
		r[i] = p
	}
	return r
}

// RefusalError is a request the server would refuse (HTTP 400, or an
// exception in its preprocessing), naming the rule.
type RefusalError struct {
	Profile Profile
	Rule    string // a short name of the rule, e.g. "tools must not be empty"
	Detail  string
}

func (e *RefusalError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s would refuse this request: %s", e.Profile, e.Rule)
	}
	return fmt.Sprintf("%s would refuse this request: %s: %s", e.Profile, e.Rule, e.Detail)
}

func refuse(p Profile, rule, format string, args ...any) error {
	return &RefusalError{Profile: p, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// IsRefusal reports whether err is a RefusalError.
func IsRefusal(err error) bool {
	var r *RefusalError
	return errors.As(err, &r)
}

// Request is one chat request as the server renders and encodes it.
type Request struct {
	// Messages are the messages the template sees.
	Messages []chat.Object
	// Tools is nil (None) or the tools the template sees.
	Tools any
	// FlatTools, when not nil, is SGLang's retry after a template error:
	// the tools as bare function objects (serving_chat.py @002897c2).
	FlatTools any
	Documents any
	Kwargs    map[string]any
	// AddGenerationPrompt and ContinueFinalMessage are apply_chat_template's
	// arguments (ContinueFinalMessage cuts the render after the final
	// message, §1.9).
	AddGenerationPrompt  bool
	ContinueFinalMessage bool
	// Suffix is appended to the render (SGLang's continued assistant text).
	Suffix string
	// AddSpecialTokens encodes the render with the tokenizer's special
	// tokens (a BOS-adding post-processor adds its BOS again).
	AddSpecialTokens bool
	// BareTexts are counted on their own, joined by " ", and added (AIPerf
	// counts the tool definitions it does not render this way).
	BareTexts []string
	// ContentFormat is the format the content was shaped for ("string" or
	// "openai"), "" where the profile does not detect one.
	ContentFormat string
	// images are the request's image parts, in order, for a model that
	// takes images (PrepareVision).
	images *imageRefs
}

// Template is what Prepare needs of a chat template: the server's
// content-format detection. *chat.Template implements it; nil means "no
// template" (content format "string").
type Template interface {
	ContentFormat(detector string, withTools bool) string
}

// Prepare applies rules to a request body that payload has read.
// A Responses body is first made the chat request the server makes of it
// (responsesAsChat, following the message-key rule's server; AIPerf
// templates its own chat view); a completions body has no template to
// render (CountCompletions counts it).
func Prepare(rules Rules, ex *extract.Inputs, tmpl Template) (*Request, error) {
	return PrepareVision(rules, ex, tmpl, nil)
}

// PrepareVision is Prepare for a model that takes images (vis nil: a
// text-only model): under vLLM's content rule, image parts become the
// template's image items or placeholders, collected in order for
// RenderRulesVision to expand.
func PrepareVision(rules Rules, ex *extract.Inputs, tmpl Template, vis *Vision) (*Request, error) {
	switch ex.Endpoint {
	case endpoint.Completions:
		return nil, errors.New("a completions body is not rendered through a chat template")
	case endpoint.Responses:
		if rules[AxisKeys] != AIPerf {
			var err error
			if ex, err = responsesAsChat(rules[AxisKeys], ex); err != nil {
				return nil, err
			}
		}
	}
	b, err := readBody(ex)
	if err != nil {
		return nil, err
	}
	req := &Request{}
	// Tools first: the template, and so the content format, may depend
	// on whether there are tools (§1.6 resolve_chat_template).
	if err := prepareTools(rules[AxisTools], b, ex, req); err != nil {
		return nil, err
	}
	if err := prepareKwargs(rules[AxisKwargs], b, req); err != nil {
		return nil, err
	}
	format := ""
	switch rules[AxisParts] {
	case VLLM, SGLang:
		format = chat.ContentString
		if tmpl != nil && !isNilTemplate(tmpl) {
			det := chat.DetectVLLM
			if rules[AxisParts] == SGLang {
				det = chat.DetectSGLang
			}
			format = tmpl.ContentFormat(det, req.Tools != nil)
		}
	}
	req.ContentFormat = format
	if err := checkRoles(rules, ex); err != nil {
		return nil, err
	}
	var imgs *imageRefs
	switch {
	case vis != nil && rules[AxisParts] == VLLM:
		imgs = &imageRefs{vis: vis}
		req.images = imgs
	case vis != nil && rules[AxisParts] == SGLang && ex.Media.Images > 0:
		// SGLang's multimodal processing is not reproduced: refuse rather
		// than count the request without its images.
		return nil, refuse(SGLang, "image", "counting images under the sglang profile is not supported yet; use --server vllm")
	}
	req.Messages = make([]chat.Object, 0, len(ex.Chat))
	for i := range ex.Chat {
		msg, err := prepareMessage(rules, &ex.Chat[i], format, imgs, vis != nil)
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, msg)
	}
	if err := preparePrompt(rules[AxisPrompt], b, req); err != nil {
		return nil, err
	}
	if rules[AxisSpecial] == VLLM {
		// §1.8: the chat request's add_special_tokens, default False
		// (chat_completion/protocol.py @002032ee, renderers/base.py @03499b26).
		req.AddSpecialTokens = b.addSpecialTokens
	}
	return req, nil
}

// isNilTemplate catches a nil *chat.Template inside the interface.
func isNilTemplate(t Template) bool {
	ct, ok := t.(*chat.Template)
	return ok && ct == nil
}

// checkRoles: vLLM and SGLang validate every message with pydantic, so a
// message without a string role is a 400 (§1.1 step 1; SGLang protocol
// "'role' must be a string"); transformers and AIPerf's chat view skip it.
func checkRoles(rules Rules, ex *extract.Inputs) error {
	if ex.RawMessages == len(ex.Chat) {
		return nil
	}
	for _, p := range []Profile{rules[AxisKeys], rules[AxisParts]} {
		if p == VLLM || p == SGLang {
			return refuse(p, "every message needs a string role", "%d of %d messages have none", ex.RawMessages-len(ex.Chat), ex.RawMessages)
		}
	}
	return nil
}

// Input is the apply_chat_template call for r.
func (r *Request) Input() chat.RenderInput {
	in := chat.RenderInput{
		Messages:             chat.ObjectsValue(r.Messages),
		Documents:            r.Documents,
		AddGenerationPrompt:  r.AddGenerationPrompt,
		ContinueFinalMessage: r.ContinueFinalMessage,
		Kwargs:               r.Kwargs,
	}
	if r.Tools != nil {
		in.Tools = r.Tools
	}
	return in
}
