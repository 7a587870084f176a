package compose

import (
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/wire"
)

// orDefault is p, or the default profile (vllm) for "".
func orDefault(p serverprofile.Profile) serverprofile.Profile {
	if p == "" {
		return serverprofile.Default
	}
	return p
}

// serverOf is the server profile conv is sized for (records.Conversation
// .Server; absent: vllm).
func serverOf(conv *records.Conversation) serverprofile.Profile {
	if conv.Server == "" {
		return serverprofile.Default
	}
	return serverprofile.Profile(conv.Server)
}

// prompt is turn k's request of conv as send builds it (wire.Build, the
// marker injected), as conv's server profile prefills it: the one count
// (serverprofile.Render).
func prompt(m *Model, conv *records.Conversation, k int, marker string) (serverprofile.Prompt, error) {
	req, err := wire.Build(conv, k, marker, nil)
	if err != nil {
		return serverprofile.Prompt{}, err
	}
	return serverprofile.PromptOfVision(serverOf(conv), req, m.Template, m.Vision, m.Now)
}

// refused makes a request the server refuses, by its rules or its
// template, a *templateError (a dataset dialog is then skipped).
func refused(err error) error {
	if serverprofile.Refused(err) {
		return &templateError{err}
	}
	return err
}

// wireIDs is the token ids of turn k's request of conv as its server
// prefills them, and its count (the ids, plus what AIPerf counts bare on
// top). A request the server refuses gives a *templateError.
func wireIDs(m *Model, conv *records.Conversation, k int, marker string) ([]int, int, error) {
	pr, err := prompt(m, conv, k, marker)
	if err != nil {
		return nil, 0, refused(err)
	}
	ids := pr.IDs(m.Tokenizer)
	n := len(ids)
	if len(pr.Bare) > 0 {
		pr.Text = nil
		n += pr.Count(m.Tokenizer)
	}
	return ids, n, nil
}

type templateError struct{ err error }

func (e *templateError) Error() string { return "rendering the request: " + e.err.Error() }
