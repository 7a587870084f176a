// Package model loads what every tool counts with from the model flags
// (--tokenizer, --chat-template, --now): the resolved files, the parsed
// tokenizer, the compiled chat template and the pinned clock. It is the one
// loader, so the four tools agree on what a model is.
package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/tokenizer"
)

// Options are the model flags.
type Options struct {
	Tokenizer    string // --tokenizer; "" = the embedded default
	ChatTemplate string // --chat-template FILE; "" = the model's own
	Now          string // --now; "" = $ISLKIT_NOW, else unpinned
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
	// Now pins strftime_now; zero means the clock.
	Now time.Time
}

// NowError is a --now value that does not parse: a bad flag, not a bad
// model.
type NowError struct{ Err error }

func (e *NowError) Error() string { return e.Err.Error() }
func (e *NowError) Unwrap() error { return e.Err }

// Load resolves and parses the model once. Errors are about the tokenizer
// files (a missing folder, an unreadable tokenizer.json) or a bad --now (a
// *NowError); a chat template that cannot be loaded or compiled is
// reported in TemplateErr.
func Load(o Options) (*Model, error) {
	src, err := modelsrc.Resolve(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	return FromSource(src, o.ChatTemplate, o.Now)
}

// FromSource loads the model of an already resolved source.
func FromSource(src *modelsrc.Source, chatTemplate, now string) (*Model, error) {
	tok, err := src.Tokenizer()
	if err != nil {
		return nil, err
	}
	m := &Model{Source: src, Tokenizer: tok}
	if m.Now, err = chat.ResolveNow(now); err != nil {
		return nil, &NowError{err}
	}
	tmpl, err := chat.LoadFS(src.FS, chatTemplate)
	switch {
	case errors.Is(err, chat.ErrNoTemplate):
	case err != nil:
		m.TemplateErr = fmt.Errorf("%s: chat template: %w", src.Name, err)
	default:
		m.Template = tmpl
	}
	return m, nil
}
