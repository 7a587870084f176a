package records

import (
	"github.com/islkit/islkit/internal/budget"
	"github.com/islkit/islkit/internal/cachebust"
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

	// CacheBust is the target the marker cost was estimated for.
	CacheBust cachebust.Target `json:"cache_bust"`
	// MarkerTokens is the mean of MarkerSamples rounded half-to-even; 0
	// (and no samples) for target none.
	MarkerTokens  int   `json:"marker_tokens"`
	MarkerSamples []int `json:"marker_samples,omitempty"`

	// Overhead is the two-equation probe's result (zeros and a reason
	// when the template was not applied or could not be probed).
	Overhead budget.TemplateOverhead `json:"template_overhead"`

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
	// SHA256 is the hex SHA-256 of the template source (the file's bytes,
	// or the config's chat_template value as JSON); "" when there is none.
	SHA256 string `json:"sha256,omitempty"`
}
