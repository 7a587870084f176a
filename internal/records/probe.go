package records

import (
	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
)

// Probe is probe's one output record and compose's input: everything
// compose needs to size turns (the chat-template overhead and the marker
// cost) plus the provenance that lets compose refuse a record made for
// another tokenizer or template.
type Probe struct {
	Kind          string `json:"kind"`           // KindProbe
	SchemaVersion int    `json:"schema_version"` // SchemaVersion
	ToolVersion   string `json:"tool_version"`   // internal/version of the probe that wrote it

	Tokenizer    ProbeTokenizer    `json:"tokenizer"`
	ChatTemplate ProbeChatTemplate `json:"chat_template"`

	// Endpoint is the endpoint the overhead was measured for (probe
	// --endpoint): chat and responses render the template (responses
	// adding the tokenizer's special tokens, as vLLM does), completions
	// only the special tokens. Absent in older records: chat.
	Endpoint endpoint.Kind `json:"endpoint,omitempty"`

	// CacheBust is the target the marker cost was estimated for.
	CacheBust cachebust.Target `json:"cache_bust"`
	// MarkerTokens is the mean of MarkerSamples rounded half-to-even; 0
	// (and no samples) for target none.
	MarkerTokens  int   `json:"marker_tokens"`
	MarkerSamples []int `json:"marker_samples,omitempty"`

	// Overhead is the two-equation probe's result (zeros and a reason
	// when the template was not applied or could not be probed).
	Overhead TemplateOverhead `json:"template_overhead"`

	// Now is the pinned strftime_now clock (RFC 3339) the template was
	// rendered with, if any; compose renders with the same one.
	Now string `json:"now,omitempty"`

	// Verify is set by --verify-url: a live server's counts of the probe
	// conversations next to ours.
	Verify *ProbeVerify `json:"verify,omitempty"`
}

// ProbeTokenizer identifies the tokenizer.
type ProbeTokenizer struct {
	// Source is --tokenizer as given (ORG/NAME@REV with a --revision other
	// than main), or modelsrc.DefaultName.
	Source string `json:"source"`
	// SHA256 is the hex SHA-256 of tokenizer.json; compose compares it.
	SHA256 string `json:"sha256"`
	// Build is how the tokenizer was built when not as tokenizer.json
	// says (ModelPin.TokenizerBuild).
	Build string `json:"build,omitempty"`
	// NumSpecialTokensToAdd is what the post-processor adds to a single
	// sequence (BOS for Llama 3.1), which a chat template renders itself.
	NumSpecialTokensToAdd int `json:"num_special_tokens_to_add"`
	// SpecialTokens are the special-token variables a template sees.
	SpecialTokens map[string]any `json:"special_tokens,omitempty"`
}

// ProbeChatTemplate identifies the chat template.
type ProbeChatTemplate struct {
	// Applied is --apply-chat-template: without it no template work is
	// done and both overheads are 0.
	Applied bool `json:"applied"`
	// Origin is where the template came from: "chat_template.jinja",
	// "tokenizer_config.json", "--chat-template" or "" for none.
	Origin string `json:"origin,omitempty"`
	// Override is the --chat-template path, when one was given.
	Override string `json:"override,omitempty"`
	// Renderer is --renderer, when given (serverprofile.RendererOf).
	Renderer string `json:"renderer,omitempty"`
	// SHA256 is the hex SHA-256 of the template source (the file's bytes,
	// or the config's chat_template value as JSON); "" when there is none.
	SHA256 string `json:"sha256,omitempty"`
}

// SampleOverhead is the probe's measurement for one sample text.
type SampleOverhead struct {
	Text   string  `json:"text"`
	Bare   int     `json:"bare"`   // tokens of the text alone
	Single int     `json:"single"` // tokens of [user]
	Triple int     `json:"triple"` // tokens of [user, assistant, user]
	Wrap   float64 `json:"wrap"`   // (triple - single - 2·bare) / 2
	Fixed  float64 `json:"fixed"`  // single - bare - wrap
}

// TemplateOverhead is the chat-template probe result (budget.ProbeChatTemplate):
//
//	wire = per_request_fixed + Σ_messages (per_msg_wrap + content tokens)
//
// Fixed and Wrap are zero, with Reason saying why, when the template could
// not be probed.
type TemplateOverhead struct {
	Fixed   int              `json:"per_request_fixed"`
	Wrap    int              `json:"per_msg_wrap"`
	Samples []SampleOverhead `json:"samples,omitempty"`
	Reason  string           `json:"reason,omitempty"`
}

// ProbeVerify is what `probe --verify-url` found: the server's
// usage.prompt_tokens for the probe conversations next to our templated
// counts. Any difference means the server tokenizes or templates
// differently from the model folder probe read.
type ProbeVerify struct {
	URL   string `json:"url"`
	Model string `json:"model"`
	// Profile is the server profile our counts assumed (probe --server).
	Profile string `json:"profile"`
	// Agree is true when every request's counts are equal.
	Agree    bool                 `json:"agree"`
	Requests []ProbeVerifyRequest `json:"requests"`
}

// ProbeVerifyRequest is one probe conversation sent with max_tokens 1.
type ProbeVerifyRequest struct {
	// Sample is the probe text's index (AIPerf's three samples).
	Sample int `json:"sample"`
	// Messages is 1 ([user]) or 3 ([user, assistant, user]).
	Messages int `json:"messages"`
	Ours     int `json:"ours"`
	Server   int `json:"server"`
	// Diff is Server − Ours.
	Diff int `json:"diff"`
}
