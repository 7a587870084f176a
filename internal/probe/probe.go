// Package probe measures what compose must subtract to hit an exact ISL:
// the chat template's overhead (AIPerf's two-equation probe, seeds
// isl-budget-compensation.md and aiperf-behaviour.md §3) and the cache-bust
// marker's token cost (§1.5), and writes them, with the tokenizer's and the
// template's identity, as one records.Probe.
package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/islkit/islkit/internal/budget"
	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/version"
)

// Options are probe's flags.
type Options struct {
	Tokenizer         string           // --tokenizer; "" = embedded default
	Source            *modelsrc.Source // the model already resolved; nil resolves Tokenizer
	ChatTemplate      string           // --chat-template FILE; "" = the model's own
	ApplyChatTemplate bool
	CacheBust         cachebust.Target
	Now               time.Time // pinned strftime_now; zero = the clock
	// Endpoint is the endpoint the overhead is measured for ("" = chat):
	// responses adds the tokenizer's special tokens to the template's
	// fixed cost (vLLM encodes its render with them); completions has no
	// template, and its fixed cost is those special tokens alone.
	Endpoint endpoint.Kind
	// Renderer is --renderer ("" = the server's choice by the model's
	// config.json model_type): with harmony the overhead is measured
	// through vLLM's Harmony render of the probe's chat bodies.
	Renderer string
}

// Renderable is what the overhead probe needs of a chat template.
type Renderable interface {
	Render(chat.RenderInput) (string, error)
}

// Counter counts tokens of text without special tokens.
type Counter interface {
	Count(text string) int
}

// Renderer adapts a template and a tokenizer to budget.Renderer: render to
// text with the generation prompt, then encode without special tokens (the
// post-#850 AIPerf probe, §3.4), so a BOS the template prints counts once.
func Renderer(t Renderable, c Counter, now time.Time) budget.Renderer {
	return func(msgs []budget.Message) (int, error) {
		// Keys in sorted order, as the Go maps the probe rendered before
		// were: content, then role.
		in := make([]chat.Object, len(msgs))
		for i, m := range msgs {
			in[i] = chat.Object{{Key: "content", Value: m.Content}, {Key: "role", Value: m.Role}}
		}
		text, err := t.Render(chat.RenderInput{Messages: chat.ObjectsValue(in), AddGenerationPrompt: true, Now: now})
		if err != nil {
			return 0, err
		}
		return c.Count(text), nil
	}
}

// ServerRenderer is a budget.Renderer that counts the probe's messages as
// p's server counts a body of endpoint ep holding them
// (serverprofile.Render: the renderer p's server uses for t's model).
func ServerRenderer(p serverprofile.Profile, ep endpoint.Kind, t *chat.Template, c serverprofile.Counter, now time.Time) budget.Renderer {
	return func(msgs []budget.Message) (int, error) {
		type message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		ms := make([]message, len(msgs))
		for i, m := range msgs {
			ms[i] = message{m.Role, m.Content}
		}
		var body []byte
		var err error
		if ep == endpoint.Responses {
			body, err = json.Marshal(map[string]any{"input": ms})
		} else {
			body, err = json.Marshal(map[string]any{"messages": ms})
		}
		if err != nil {
			return 0, err
		}
		ex, err := extract.Body(body)
		if err != nil {
			return 0, err
		}
		pr, err := serverprofile.Render(p, ex, t, now, nil)
		if err != nil {
			return 0, err
		}
		return pr.Count(c), nil
	}
}

// withSpecial adds the n special tokens a server's encode adds to every
// render.
func withSpecial(r budget.Renderer, n int) budget.Renderer {
	return func(msgs []budget.Message) (int, error) {
		c, err := r(msgs)
		return c + n, err
	}
}

// Overhead runs the chat-template probe; t == nil means no template.
func Overhead(t Renderable, c Counter, now time.Time) records.TemplateOverhead {
	if t == nil {
		return budget.ProbeChatTemplate(nil, c)
	}
	return budget.ProbeChatTemplate(Renderer(t, c, now), c)
}

// MarkerCost estimates the marker's tokens for target t (0, without
// encoding anything, for none).
func MarkerCost(t cachebust.Target, c Counter) (int, []int) {
	return cachebust.EstimateCost(t, c, cachebust.DefaultEstimatorSamples)
}

// TemplateSource is where the model's chat template comes from and the
// SHA-256 of its bytes (chat.FindTemplate); origin is "" when the model
// has none.
func TemplateSource(src *modelsrc.Source, override string) (origin, sum string, err error) {
	t, err := chat.FindTemplate(src.FS, override)
	if errors.Is(err, chat.ErrNoTemplate) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return t.Origin, t.SHA256, nil
}

// Run resolves the model and produces the probe record. Errors are about
// the model files (unreadable tokenizer, missing --chat-template file); a
// template that cannot be compiled or rendered is not an error but a zero
// overhead with the reason in the record, as in AIPerf.
func Run(opts Options) (*records.Probe, error) {
	if !opts.CacheBust.Valid() {
		return nil, fmt.Errorf("invalid cache-bust target %q", opts.CacheBust)
	}
	ep := opts.Endpoint.OrChat()
	if !ep.Valid() {
		return nil, fmt.Errorf("invalid endpoint %q: valid values are %s", opts.Endpoint, endpoint.Names())
	}
	if !ep.Templated() && opts.ApplyChatTemplate {
		return nil, fmt.Errorf("--endpoint %s: the server never applies a chat template to a completions prompt; drop --apply-chat-template", ep)
	}
	src := opts.Source
	if src == nil {
		var err error
		if src, err = modelsrc.Resolve(opts.Tokenizer); err != nil {
			return nil, err
		}
	}
	tok, err := src.Tokenizer()
	if err != nil {
		return nil, err
	}
	sum, _ := src.TokenizerSHA256()
	build, _ := src.Build()
	// chat's errors name the file within the model; the folder says whose.
	origin, tsum, err := TemplateSource(src, opts.ChatTemplate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	special, err := chat.SpecialTokensFS(src.FS)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	rec := &records.Probe{
		Kind:          records.KindProbe,
		SchemaVersion: records.SchemaVersion,
		ToolVersion:   version.String(),
		Tokenizer: records.ProbeTokenizer{
			Source:                src.Name,
			SHA256:                sum,
			Build:                 build,
			NumSpecialTokensToAdd: tok.NumSpecialTokensToAdd(false),
			SpecialTokens:         special,
		},
		ChatTemplate: records.ProbeChatTemplate{
			Applied:  opts.ApplyChatTemplate,
			Origin:   origin,
			Override: opts.ChatTemplate,
			SHA256:   tsum,
			Renderer: opts.Renderer,
		},
		Endpoint:  ep,
		CacheBust: opts.CacheBust,
	}
	if !opts.Now.IsZero() {
		rec.Now = opts.Now.Format(time.RFC3339)
	}
	rec.MarkerTokens, rec.MarkerSamples = MarkerCost(opts.CacheBust, tok)
	if !ep.Templated() {
		// vLLM encodes a completions prompt with add_special_tokens=true.
		added := tok.NumSpecialTokensToAdd(false)
		rec.Overhead = records.TemplateOverhead{Fixed: added,
			Reason: fmt.Sprintf("endpoint completions: no chat template; per_request_fixed is the %d special token(s) the tokenizer adds", added)}
		return rec, nil
	}
	if !opts.ApplyChatTemplate {
		// AIPerf never calls the template without --apply-chat-template.
		rec.Overhead = records.TemplateOverhead{Reason: "chat template not applied (--apply-chat-template off)"}
		return rec, nil
	}
	tmpl, mistral, err := model.MistralTemplate(src)
	if err != nil {
		return nil, err
	}
	if mistral {
		tmpl.Renderer = opts.Renderer
	} else if tmpl, err = chat.LoadFS(src.FS, opts.ChatTemplate); err == nil {
		tmpl.Renderer = opts.Renderer
		if tmpl.ModelType, err = model.ModelType(src); err != nil {
			return nil, err
		}
	}
	switch {
	case err == nil && serverprofile.RendererOf(serverprofile.Default, tmpl) != serverprofile.RendererJinja:
		// The server renders this model with code of its own: the
		// overhead is measured through it (serverprofile.Render).
		rec.Overhead = budget.ProbeChatTemplate(ServerRenderer(serverprofile.Default, ep, tmpl, tok, opts.Now), tok)
	case errors.Is(err, chat.ErrNoTemplate):
		rec.Overhead = Overhead(nil, tok, opts.Now)
	case err != nil:
		rec.Overhead = records.TemplateOverhead{Reason: "chat template unusable: " + err.Error()}
	case ep.AddsSpecialTokens():
		// Responses: vLLM encodes the render with special tokens, so every
		// render counts them once (they land in per_request_fixed).
		rec.Overhead = budget.ProbeChatTemplate(withSpecial(Renderer(tmpl, tok, opts.Now), tok.NumSpecialTokensToAdd(false)), tok)
	default:
		rec.Overhead = Overhead(tmpl, tok, opts.Now)
	}
	return rec, nil
}
