package records

// ModelPin identifies the model and chat template counts were made with:
// what probe measured (Probe.Pin), what compose sized a conversation's
// turns with (Conversation.ComposedFor) and, copied from it, what send's
// request records were composed for (Request.ComposedFor). internal/model
// loads the model a pin names and checks a loaded model against one.
type ModelPin struct {
	// Tokenizer is the model's source as given (--tokenizer: a path, a
	// folder, or ORG/NAME@REVISION for a Hub model at a revision other
	// than main; modelsrc.DefaultName for the embedded one); the default
	// --tokenizer of the tools that read the pin. TokenizerSHA256 is the
	// SHA-256 of its tokenizer.json: what the checks compare.
	Tokenizer       string `json:"tokenizer"`
	TokenizerSHA256 string `json:"tokenizer_sha256"`
	// ChatTemplateApplied is false when the counts are bare (probe
	// without --apply-chat-template); ChatTemplateSHA256 is the template
	// source's hash ("" for none), ChatTemplate the --chat-template file
	// it came from, if one was given.
	ChatTemplateApplied bool   `json:"chat_template_applied"`
	ChatTemplate        string `json:"chat_template,omitempty"`
	ChatTemplateSHA256  string `json:"chat_template_sha256,omitempty"`
	// Renderer is the --renderer the counts were made with, when one was
	// given; without it the server's choice by the model's config.json
	// stands (serverprofile.RendererOf).
	Renderer string `json:"renderer,omitempty"`
	// Now is the pinned strftime_now clock (RFC 3339) the requests were
	// rendered with, if any.
	Now string `json:"now,omitempty"`
	// Processor is the folder of the image processing the images were
	// counted with (compose --processor), when it is not the tokenizer's
	// folder: send --exact's default --processor.
	Processor string `json:"processor,omitempty"`
	// TokenizerBuild says the tokenizer was not read as tokenizer.json
	// says but built as the server's library builds it:
	// "transformers5-llama" (the vllm profile, a Llama-class folder:
	// modelsrc.AsTransformers5). Empty: tokenizer.json as it is, or a
	// record older than the field.
	TokenizerBuild string `json:"tokenizer_build,omitempty"`
}

// Pin is the model the probe record measured.
func (p *Probe) Pin() ModelPin {
	pin := ModelPin{Tokenizer: p.Tokenizer.Source, TokenizerSHA256: p.Tokenizer.SHA256,
		ChatTemplateApplied: p.ChatTemplate.Applied, Now: p.Now, TokenizerBuild: p.Tokenizer.Build}
	if pin.ChatTemplateApplied {
		pin.ChatTemplate, pin.ChatTemplateSHA256 = p.ChatTemplate.Override, p.ChatTemplate.SHA256
		pin.Renderer = p.ChatTemplate.Renderer
	}
	return pin
}
