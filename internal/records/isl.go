package records

import "github.com/islkit/islkit/internal/endpoint"

// ISL is what measure adds to each request record (under the key "isl"):
// the input sequence length counted several ways, and why the counts
// differ. Counts that cannot be known for a record are omitted.
type ISL struct {
	// Bare is AIPerf's default count: the text of every message (text
	// parts only) joined by one space, encoded without special tokens.
	// measure computes it when it is the reported count, or on request
	// (--bare): next to a templated count it would double the work.
	Bare *int `json:"bare,omitempty"`
	// Templated is the messages rendered through the chat template with
	// add_generation_prompt=true, then encoded: what the server processes.
	Templated *int `json:"templated,omitempty"`
	// Profile is the server profile the templated count follows (vllm,
	// sglang, transformers or aiperf; see internal/serverprofile).
	Profile string `json:"profile,omitempty"`
	// Renderer names what rendered the templated count: "jinja" (the
	// chat template), "harmony" (gpt-oss under vLLM: openai_harmony) or
	// "deepseek_v32" (DeepSeek-V3.2 under vLLM: its encoder), as the profile's server chooses for the model or --renderer says.
	Renderer string `json:"renderer,omitempty"`
	// SizedFor is the server profile send's record says the request was
	// sized for (compose --server), when it is not Profile: the gap to the
	// target is then partly the two servers' difference.
	SizedFor string `json:"sized_for,omitempty"`
	// Counted names the member holding the count measure reports as the
	// request's ISL: "templated" (the request as the profile's server
	// counts it: chat and Responses bodies through the chat template,
	// completions prompts encoded as that server encodes them), or "bare"
	// (AIPerf's count: no --apply-chat-template, the aiperf profile where
	// it templates nothing, no template, or a template error, see
	// TemplateError).
	// It is empty only when the request could not be counted (Error).
	Counted       string `json:"counted,omitempty"`
	TemplateError string `json:"template_error,omitempty"`
	// Error says why the request was not counted (a field measure cannot
	// read, a request the server would refuse, no payload), or why a
	// counted request lacks the server's count (its usage unreadable).
	// The record is written all the same, in its place.
	Error string `json:"error,omitempty"`
	// Endpoint is the API the body is for: chat, completions or responses.
	Endpoint endpoint.Kind `json:"endpoint,omitempty"`
	// ServerField names the usage member a server reports this endpoint's
	// prompt count in: "prompt_tokens" (chat, completions) or
	// "input_tokens" (responses).
	ServerField string `json:"server_field,omitempty"`
	// Server is the server's reported prompt count (usage.prompt_tokens,
	// or usage.input_tokens for the Responses API).
	Server *int `json:"server,omitempty"`
	// Target is the wire ISL compose aimed at; Expected is the exact
	// count compose promised for this request (exact mode).
	Target   *int `json:"target,omitempty"`
	Expected *int `json:"expected,omitempty"`
	// ExpectedCached is send's expected_cached_tokens; ServerCached the
	// server's usage.prompt_tokens_details.cached_tokens
	// (input_tokens_details.cached_tokens for the Responses API).
	ExpectedCached *int `json:"expected_cached,omitempty"`
	ServerCached   *int `json:"server_cached,omitempty"`
	// MarkerEnd is how many of the counted prompt's tokens run through
	// the end of its cache-bust marker, set on a conversation's first
	// request (turn 0, any recycle pass) when the server reported cached
	// tokens. The marker is new in every run, so a fresh run's server can
	// have cached only what precedes it: ServerCached ≥ MarkerEnd means
	// the marker itself was served from a cache (an earlier run with the
	// same --benchmark-id).
	MarkerEnd *int `json:"marker_end,omitempty"`
	// Where the request sits in its conversation, when known.
	ConversationID string `json:"conversation_id,omitempty"`
	TurnIndex      *int   `json:"turn_index,omitempty"`
	// Media parts dropped from the templated count (servers count them).
	Media *Media `json:"media,omitempty"`
	// ImageTokens are the tokens the request's images take in the
	// templated count, for a model whose processor configuration measure
	// read (vision-language models).
	ImageTokens *ImageTokens `json:"image_tokens,omitempty"`
	// VsTarget explains Counted − Target; VsServer explains
	// Server − Counted.
	VsTarget *Gap `json:"vs_target,omitempty"`
	VsServer *Gap `json:"vs_server,omitempty"`
	// VsProfile compares the templated count with the same request
	// counted under another profile (measure --compare-server).
	VsProfile *ProfileGap `json:"vs_profile,omitempty"`
	// Chained marks a turn sent with send --responses-chain: counted from
	// the conversation the server reconstructs (the record's
	// chained.reconstructed), not from its payload, which carries only
	// the new turn.
	Chained bool `json:"chained,omitempty"`
	// OSL is the request's output measured against its max_tokens
	// (live requests with a max_tokens only).
	OSL *OSL `json:"osl,omitempty"`
}

// ProfileGap compares a templated count with Count, the same request
// counted under another server profile: Gap is Templated − Count split by
// the rule families in which the two profiles differ. Error, instead of
// Count and Gap, says why the other profile could not count it (a
// refusal, a template error).
type ProfileGap struct {
	Profile string `json:"profile"`
	Count   *int   `json:"count,omitempty"`
	Gap     *Gap   `json:"gap,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Media counts a request's non-text content parts.
type Media struct {
	Images int `json:"images,omitempty"`
	Audios int `json:"audios,omitempty"`
	Videos int `json:"videos,omitempty"`
}

// ImageTokens is each image's share of a templated count, in prompt
// order: the tokens its placeholder became (exact where they are special
// tokens only; where the family adds plain text around the image, as
// Gemma 3's newlines, counted on their own), and their sum.
type ImageTokens struct {
	PerImage []int `json:"per_image"`
	Total    int   `json:"total"`
}

// Gap is a difference between two counts, split by cause. The causes'
// tokens always add up to Total; what no cause explains is "unexplained".
type Gap struct {
	Total  int     `json:"total"`
	Causes []Cause `json:"causes,omitempty"`
}

// Cause is one named share of a Gap.
type Cause struct {
	Cause  string `json:"cause"`
	Tokens int    `json:"tokens"`
}

// Gap causes.
const (
	// CauseTemplate: the template's own tokens differ from the probe's
	// averaged constants (fixed + wrap per message).
	CauseTemplate = "template_overhead"
	// CauseMarker: the cache-bust marker costs other than estimated.
	CauseMarker = "marker"
	// CauseBoundary: BPE merges across the seams between template text,
	// marker and content (the count of a rendering is not the sum of its
	// parts).
	CauseBoundary = "bpe_boundary_merges"
	// CauseContent: the content itself has another length than budgeted.
	CauseContent = "content"
	// CauseReplies: the assistant replies in the history have another
	// length than the max_tokens compose budgeted for them (live runs use
	// the server's real replies, whose re-encoded length drifts).
	CauseReplies = "assistant_replies"
	// CauseDoubledBOS: the server tokenized the rendered prompt with
	// special tokens, adding a BOS the template already wrote.
	CauseDoubledBOS = "doubled_bos"
	// CauseTools: tool definitions the server rendered and we did not
	// (--no-tools), or the other way round.
	CauseTools = "tools"
	// CauseMedia: image/audio/video parts, which servers count and the
	// text-only templated count drops.
	CauseMedia = "media"
	// CauseImage: image tokens of a vision-language model, which the
	// server counts and a bare (text-only) count leaves out.
	CauseImage = "image"
	// CausePartJoin: list content whose text parts one side joined with
	// "\n" (vLLM) or " " (SGLang) or kept as a list, where the other
	// joined them with "" (AIPerf, transformers' wire reference).
	CausePartJoin = "content_part_join"
	// Rule families in which server profiles differ (VsProfile; see
	// serverprofile.Axis): null content, tool-call argument format,
	// reasoning fields, other message keys, the generation prompt
	// (add_generation_prompt, continue_final_message, SGLang's final
	// assistant rewrite), template kwargs, special tokens. Part join and
	// tools are CausePartJoin and CauseTools.
	CauseNullContent    = "null_content"
	CauseToolCallArgs   = "tool_call_arguments"
	CauseReasoning      = "reasoning"
	CauseMessageKeys    = "message_keys"
	CauseGenPrompt      = "generation_prompt"
	CauseTemplateKwargs = "template_kwargs"
	CauseSpecialTokens  = "special_tokens"
	// CauseTemplateError: the request was counted bare because the chat
	// template raised or the model has none (ISL.TemplateError says which),
	// so the template's whole share of the gap is unknown.
	CauseTemplateError = "template_error"
	// CauseUnexplained: the rest — a different tokenizer, template or
	// server-side prompt.
	CauseUnexplained = "unexplained"
)

// OSL causes: why a request's output missed its max_tokens (OSL.Cause).
const (
	// OSLExact: the server's count is the target.
	OSLExact = "exact"
	// OSLStoppedEarly: EOS or a stop string before the target
	// (finish_reason stop): asked exact, the server ignored min_tokens or
	// ignore_eos.
	OSLStoppedEarly = "stopped_early"
	// OSLLengthCut: cut for length below the target (finish_reason
	// length): the server's context window or its own output cap.
	OSLLengthCut = "length_cut"
	// OSLOverTarget: more tokens than max_tokens were counted.
	OSLOverTarget = "over_target"
	// OSLFailedMidStream: the request failed after output began.
	OSLFailedMidStream = "failed_midstream"
	// OSLOtherFinish: another finish reason (tool_calls, content_filter).
	OSLOtherFinish = "other_finish"
)

// OSL is one request's output length as the client received it.
type OSL struct {
	// Target is the request's max_tokens.
	Target int `json:"target"`
	// Asked is how the body asked for it (the send record's
	// output_length.mode: exact, user, best_effort); "" when not known.
	Asked string `json:"asked,omitempty"`
	// Received is the server's completion_tokens, or Reencoded when the
	// server sent no usage (ReceivedFrom says which).
	Received     int    `json:"received"`
	ReceivedFrom string `json:"received_from"` // "server" or "reencoded"
	// Error is Received − Target.
	Error int `json:"error"`
	// Server is usage.completion_tokens (output_tokens for Responses).
	Server *int `json:"server,omitempty"`
	// Reasoning is the reasoning tokens inside Server, when reported
	// (completion_tokens_details / output_tokens_details).
	Reasoning *int `json:"reasoning,omitempty"`
	// Reencoded is islkit's count of the streamed text (output_text, and
	// reasoning_text, each encoded on its own without special tokens) with
	// measure's tokenizer: what a later turn's history carries.
	// ReencodedDiff is Reencoded − Server.
	Reencoded     *int   `json:"reencoded,omitempty"`
	ReencodedDiff *int   `json:"reencoded_diff,omitempty"`
	FinishReason  string `json:"finish_reason,omitempty"`
	// Cause is OSLExact or why the output missed the target.
	Cause string `json:"cause"`
}
