// Package model loads what every tool counts with from the model flags
// (--tokenizer, --chat-template, --now): the resolved files, the parsed
// tokenizer, the compiled chat template and the pinned clock. It is the one
// loader, so the four tools agree on what a model is, and the one check of
// a loaded model against the pin a record carries (records.ModelPin:
// LoadPinned, Check).
package model

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/tokenizer"
)

// Options are the model flags.
type Options struct {
	Tokenizer    string // --tokenizer; "" = the embedded default
	ChatTemplate string // --chat-template FILE; "" = the model's own
	Now          string // --now; "" = $ISLKIT_NOW, else unpinned
	// Renderer is --renderer: "" lets the server's choice stand (by
	// config.json's model_type), else jinja or harmony
	// (serverprofile.ParseRenderer).
	Renderer string
	// TokenizerMode is --tokenizer-mode (modelsrc.ParseMode): mistral
	// reads the model's tekken.json and renders with the mistral
	// renderer, as vLLM's MistralTokenizer; hf refuses a model without
	// tokenizer.json; "" or auto is the folder's own choice.
	TokenizerMode string
	// Server is the --server profile the tool counts for: one that loads
	// tokenizers through transformers 5 (vllm) gets a Llama-class folder's
	// tokenizer as transformers 5 builds it (modelsrc.AsTransformers5),
	// which the pin records. "": tokenizer.json as it is.
	Server string
}

// AsServer makes src's tokenizer the one server (a --server profile)
// loads; call it before the tokenizer is first read. Every tool that
// knows its server goes through it (Load, LoadPinned, the test server).
// The embedded default is shared and never a Llama-class folder.
func AsServer(src *modelsrc.Source, server string) {
	if src.Dir != "" && serverprofile.Profile(server).BuildsTokenizerAsTransformers5() {
		src.AsTransformers5 = true
	}
}

// Model is a loaded model.
type Model struct {
	Source    *modelsrc.Source
	Tokenizer *tokenizer.Tokenizer
	// Template is nil when the model has no chat template, or when it has
	// one that does not compile (then TemplateErr says why).
	Template *chat.Template
	// TemplateErr is why the model's template is unusable. It is not an
	// error of Load: a tool that only counts bare text goes on without it,
	// one that applies the template refuses to start.
	TemplateErr error
	// ChatTemplate is the --chat-template file the template was read
	// from ("" for the model's own).
	ChatTemplate string
	// Now pins strftime_now; zero means the clock.
	Now time.Time
	// Vision is the model's image processing, for a tool that counts
	// images (compose --images): nil until that tool sets it
	// (serverprofile.LoadVision), a text-only model.
	Vision *serverprofile.Vision
}

// Load resolves and parses the model once. Errors are about the tokenizer
// files (a missing folder, an unreadable tokenizer.json) or a bad --now (a
// cli.UsageError); a chat template that cannot be loaded or compiled is
// reported in TemplateErr.
func Load(o Options) (*Model, error) {
	renderer, err := modeRenderer(o)
	if err != nil {
		return nil, err
	}
	src, err := modelsrc.ResolveMode(o.Tokenizer, o.TokenizerMode)
	if err != nil {
		return nil, err
	}
	AsServer(src, o.Server)
	m, err := FromSource(src, o.ChatTemplate, o.Now)
	if err != nil {
		return nil, err
	}
	return m, m.SetRenderer(renderer)
}

// modeRenderer is the renderer o asks for: --tokenizer-mode mistral is
// the mistral renderer (another --renderer with it is a usage error).
func modeRenderer(o Options) (string, error) {
	mode, err := modelsrc.ParseMode(o.TokenizerMode)
	if err != nil {
		return "", err
	}
	if mode != modelsrc.ModeMistral {
		return o.Renderer, nil
	}
	if o.Renderer != "" && o.Renderer != serverprofile.RendererMistral {
		return "", cli.Usagef("--renderer %s with --tokenizer-mode mistral: that mode renders with mistral-common (--renderer mistral)", o.Renderer)
	}
	return serverprofile.RendererMistral, nil
}

// FromSource loads the model of an already resolved source.
func FromSource(src *modelsrc.Source, chatTemplate, now string) (*Model, error) {
	tok, err := src.Tokenizer()
	if err != nil {
		return nil, err
	}
	m := &Model{Source: src, Tokenizer: tok, ChatTemplate: chatTemplate}
	if m.Now, err = chat.ResolveNow(now); err != nil {
		return nil, cli.Usage(err) // --now or $ISLKIT_NOW: a bad setting, not a bad model
	}
	if mt, ok, err := MistralTemplate(src); ok || err != nil {
		m.Template = mt
		return m, err
	}

	tmpl, err := chat.LoadFS(src.FS, chatTemplate)
	switch {
	case errors.Is(err, chat.ErrNoTemplate):
	case err != nil:
		m.TemplateErr = fmt.Errorf("%s: chat template: %w", src.Name, err)
	default:
		m.Template = tmpl
	}
	mt, err := ModelType(src)
	if err != nil {
		return nil, err
	}
	if m.Template != nil {
		m.Template.ModelType = mt
	}
	if m.rendersDeepSeekV32(mt) {
		if err := m.useDeepSeekV32(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// MistralTemplate is the template of a Mistral-format model (a
// tekken.json folder), ok false for any other: vLLM encodes its requests
// with mistral-common, not a Jinja template (serverprofile's mistral
// renderer), from the tokenizer version and special tokens of the file.
// Every tool that loads a model's template asks this first.
func MistralTemplate(src *modelsrc.Source) (t *chat.Template, ok bool, err error) {
	if src.Format == modelsrc.FormatSentencePiece {
		// mistral-common's SentencePiece models: the version is the file
		// name's (tokenizer.model.v3), the special tokens its control
		// pieces.
		name := filepath.Base(src.TokenizerFile)
		data, err := src.ReadFile(name)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", src.TokenizerFile, err)
		}
		special, err := tokenizer.SentencePieceSpecials(data)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", src.TokenizerFile, err)
		}
		return &chat.Template{Mistral: &chat.MistralFormat{Version: modelsrc.SentencePieceVersion(name), Special: special, SentencePiece: true}}, true, nil
	}
	if src.Format != modelsrc.FormatTekken {
		return nil, false, nil
	}
	data, err := src.ReadFile(filepath.Base(src.TokenizerFile))
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", src.TokenizerFile, err)
	}
	mf, err := serverprofile.MistralFormatOf(data)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", src.TokenizerFile, err)
	}
	return &chat.Template{Mistral: mf}, true, nil
}

// maxConfigSize bounds the config.json read for its model_type: model
// configs are a few kilobytes.
const maxConfigSize = 4 << 20

// ModelType is the model_type of src's config.json ("" when it has no
// config.json), which a server reads to choose its renderer. A
// config.json that is too large, not a JSON object, or whose model_type
// is not a string is an error naming the file and the field.
func ModelType(src *modelsrc.Source) (string, error) {
	st, err := fs.Stat(src.FS, "config.json")
	if err != nil {
		return "", nil
	}
	name := src.Name + "/config.json"
	if st.Size() > maxConfigSize {
		return "", fmt.Errorf("%s: %d bytes, more than a model config's %d", name, st.Size(), maxConfigSize)
	}
	data, err := src.ReadFile("config.json")
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	obj, err := jsonobj.Parse(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	raw, ok := obj.Get("model_type")
	if !ok || string(raw) == "null" {
		return "", nil
	}
	mt, err := jsonobj.String(raw)
	if err != nil {
		return "", fmt.Errorf("%s: field model_type: not a string", name)
	}
	if len(mt) > 256 {
		return "", fmt.Errorf("%s: field model_type: %d bytes long, not a model type", name, len(mt))
	}
	return mt, nil
}

// SetRenderer applies --renderer (a cli.UsageError when it names no
// renderer, or one not reproduced yet).
func (m *Model) SetRenderer(name string) error {
	r, err := serverprofile.ParseRenderer(name)
	if err != nil {
		return cli.Usage(err)
	}
	if r == serverprofile.RendererMistral && (m.Template == nil || m.Template.Mistral == nil) {
		// mistral-common reads tekken.json; a tokenizer.json folder has none.
		return cli.Usagef("--renderer mistral: %s is not a Mistral-format model (no tekken.json nor tokenizer.model.v*; --tokenizer-mode mistral reads one beside a tokenizer.json)", m.Source.Name)
	}
	if r == serverprofile.RendererDeepSeekV32 {
		if err := m.useDeepSeekV32(); err != nil {
			return cli.Usage(err)
		}
	}
	if m.Template != nil {
		m.Template.Renderer = r
	}
	return nil
}

// TemplateSHA256 is the SHA-256 of the chat template source the model
// was loaded with, "" when it has none.
func (m *Model) TemplateSHA256() (string, error) {
	src, err := chat.FindTemplate(m.Source.FS, m.ChatTemplate)
	switch {
	case errors.Is(err, chat.ErrNoTemplate):
		return "", nil
	case err != nil:
		return "", err
	}
	return src.SHA256, nil
}

// Pin is the loaded model's pin, its chat template applied or not.
func (m *Model) Pin(templateApplied bool) (records.ModelPin, error) {
	sum, err := m.Source.TokenizerSHA256()
	if err != nil {
		return records.ModelPin{}, err
	}
	pin := records.ModelPin{Tokenizer: m.Source.Name, TokenizerSHA256: sum, ChatTemplateApplied: templateApplied}
	if pin.TokenizerBuild, err = m.Source.Build(); err != nil {
		return records.ModelPin{}, err
	}
	if templateApplied {
		if pin.ChatTemplateSHA256, err = m.TemplateSHA256(); err != nil {
			return records.ModelPin{}, err
		}
		pin.ChatTemplate = m.ChatTemplate
		if m.Template != nil {
			pin.Renderer = m.Template.Renderer
		}
	}
	if !m.Now.IsZero() {
		pin.Now = m.Now.Format(time.RFC3339Nano)
	}
	return pin, nil
}

// Differs says how the loaded model differs from pin, "" when it counts
// as pin's does: another tokenizer.json, or, when pin applied a chat
// template and applyTemplate says this model will too, another template.
// The clock is not compared (a template that ignores it counts the same).
func (m *Model) Differs(pin records.ModelPin, applyTemplate bool) (string, error) {
	sum, err := m.Source.TokenizerSHA256()
	if err != nil {
		return "", err
	}
	if sum != pin.TokenizerSHA256 {
		return fmt.Sprintf("tokenizer %s (tokenizer.json sha256 %s), not %s (%s)", m.Source.Name, sum, pin.Tokenizer, pin.TokenizerSHA256), nil
	}
	if build, err := m.Source.Build(); err != nil {
		return "", err
	} else if pin.TokenizerBuild != "" && build != pin.TokenizerBuild {
		return fmt.Sprintf("tokenizer %s read as tokenizer.json says, not built as %s (%s)", m.Source.Name, pin.TokenizerBuild, modelsrc.Transformers5Issue), nil
	}
	if !pin.ChatTemplateApplied || !applyTemplate {
		return "", nil
	}
	tsum, err := m.TemplateSHA256()
	if err != nil {
		return "", err
	}
	if tsum != pin.ChatTemplateSHA256 {
		return fmt.Sprintf("chat template sha256 %q of %s, not %q", tsum, m.Source.Name, pin.ChatTemplateSHA256), nil
	}
	return "", nil
}

// LoadPinned loads the model pin names and checks it is that model. o's
// empty fields default to the pin's: the tokenizer, the --chat-template
// file and, after --now and $ISLKIT_NOW, the clock. A model other than
// the pin's (another tokenizer.json or template, by SHA-256) is a usage
// error that says what named the pin (records, e.g. "the probe record")
// and what to do (fix). Without ChatTemplateApplied, or when the pin's
// model has no template, Template is nil: the counts are bare.
func LoadPinned(pin records.ModelPin, o Options, named, fix string) (*Model, error) {
	if o.Tokenizer == "" && pin.Tokenizer != modelsrc.DefaultName {
		o.Tokenizer = pin.Tokenizer
	}
	renderer, err := modeRenderer(o)
	if err != nil {
		return nil, err
	}
	mode := o.TokenizerMode
	if pin.Renderer == serverprofile.RendererMistral || renderer == serverprofile.RendererMistral {
		// The pin's tokenizer is the model's tekken.json (the probe's
		// --tokenizer-mode mistral, or its Mistral-format folder).
		mode = modelsrc.ModeMistral
	}
	src, err := modelsrc.ResolveMode(o.Tokenizer, mode)
	if err != nil {
		return nil, err
	}
	AsServer(src, o.Server)
	m, err := PinnedFromSource(src, pin, o.ChatTemplate, o.Now, named, fix)
	if err != nil {
		return nil, err
	}
	if renderer == "" {
		return m, nil // PinnedFromSource applied the pin's
	}
	return m, m.SetRenderer(renderer)
}

// PinnedFromSource is LoadPinned for a model already resolved.
func PinnedFromSource(src *modelsrc.Source, pin records.ModelPin, chatTemplate, now, named, fix string) (*Model, error) {
	if chatTemplate == "" {
		chatTemplate = pin.ChatTemplate
	}
	m, err := FromSource(src, chatTemplate, now)
	if err != nil {
		return nil, err
	}
	if err := m.check(pin, named, fix); err != nil {
		return nil, err
	}
	// Counted as the pin's model was: with its --renderer.
	if err := m.SetRenderer(pin.Renderer); err != nil {
		return nil, fmt.Errorf("%s: renderer: %w", named, err)
	}
	return m, nil
}

// check makes m count as pin's model does, or says why it cannot.
func (m *Model) check(pin records.ModelPin, named, fix string) error {
	sum, err := m.Source.TokenizerSHA256()
	if err != nil {
		return err
	}
	if sum != pin.TokenizerSHA256 {
		return cli.Usagef("model mismatch: %s: made with %s (tokenizer.json sha256 %s) but --tokenizer %s has sha256 %s; %s",
			named, pin.Tokenizer, pin.TokenizerSHA256, m.Source.Name, sum, fix)
	}
	// A pin without a build is tokenizer.json as it is, or a record older
	// than the field: the tool's own --server decides then.
	if build, err := m.Source.Build(); err != nil {
		return err
	} else if pin.TokenizerBuild != "" && build != pin.TokenizerBuild {
		return cli.Usagef("tokenizer mismatch: %s: counted with the tokenizer built as %s (%s) but this tool's --server reads %s's tokenizer.json as it is; %s",
			named, pin.TokenizerBuild, modelsrc.Transformers5Issue, m.Source.Name, fix)
	}
	if m.Now.IsZero() && pin.Now != "" {
		if m.Now, err = chat.ParseNow(pin.Now); err != nil {
			return fmt.Errorf("%s: now: %w", named, err)
		}
	}
	if !pin.ChatTemplateApplied {
		m.Template, m.TemplateErr = nil, nil
		return nil
	}
	tsum, err := m.TemplateSHA256()
	if err != nil {
		return err
	}
	if tsum != pin.ChatTemplateSHA256 {
		return cli.Usagef("chat template mismatch: %s: made with template sha256 %q but %s gives %q; %s",
			named, pin.ChatTemplateSHA256, m.Source.Name, tsum, fix)
	}
	if tsum == "" {
		if m.Template != nil && m.Template.Mistral != nil {
			return nil // mistral-common's encoding: its tekken.json is the tokenizer, checked above
		}
		m.Template = nil // no template: the counts were bare too
		return nil
	}
	return m.TemplateErr
}
