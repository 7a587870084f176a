// Package endpoint names the OpenAI-compatible endpoints islkit composes
// for, sends to and counts: chat completions, (legacy) completions and
// the Responses API. It is the one place for their names and URL paths;
// what each endpoint's body holds and how a server counts it is described
// in docs/reference/server-preprocessing.md §1–3.
package endpoint

import (
	"fmt"
	"strings"
)

// Kind is an endpoint.
type Kind string

const (
	// Chat is /v1/chat/completions: messages, templated by the server,
	// encoded without special tokens (vLLM's add_special_tokens=false).
	Chat Kind = "chat"
	// Completions is /v1/completions: a bare prompt, never templated,
	// encoded with special tokens (add_special_tokens=true), one request
	// per conversation.
	Completions Kind = "completions"
	// Responses is /v1/responses: instructions and input items, which the
	// server turns into chat messages and templates; vLLM encodes the
	// render with special tokens (add_special_tokens unset, default true).
	Responses Kind = "responses"
)

// Kinds lists every endpoint, chat (the default) first.
func Kinds() []Kind { return []Kind{Chat, Completions, Responses} }

// Names is the valid spellings joined for messages and --help.
func Names() string {
	names := make([]string, 0, 3)
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// Parse parses an endpoint name case-insensitively, ignoring surrounding
// spaces; "" is chat, so records written before the field existed read as
// chat.
func Parse(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if k == "" {
		return Chat, nil
	}
	if k.Valid() {
		return k, nil
	}
	return "", fmt.Errorf("invalid endpoint %q: valid values are %s", s, Names())
}

// Valid reports whether k is one of Kinds (exact spelling).
func (k Kind) Valid() bool {
	switch k {
	case Chat, Completions, Responses:
		return true
	}
	return false
}

// OrChat is k, or Chat when k is "" (a record or flag without the field:
// chat is the default endpoint). Records keep "" rather than being
// rewritten to chat when read, so that a filter writes back what it read.
func (k Kind) OrChat() Kind {
	if k == "" {
		return Chat
	}
	return k
}

// Path is the endpoint's standard URL path.
func (k Kind) Path() string {
	switch k.OrChat() {
	case Completions:
		return "/v1/completions"
	case Responses:
		return "/v1/responses"
	default:
		return "/v1/chat/completions"
	}
}

// Templated reports whether the server renders the request through the
// chat template (chat and responses; never completions).
func (k Kind) Templated() bool { return k.OrChat() != Completions }

// AddsSpecialTokens reports whether the server encodes the (rendered)
// prompt with the tokenizer's special tokens (vLLM: completions and
// responses; chat leaves them to the template).
func (k Kind) AddsSpecialTokens() bool { return k.OrChat() != Chat }

// MultiTurn reports whether one conversation may have several requests
// (a completions prompt has no history).
func (k Kind) MultiTurn() bool { return k.OrChat() != Completions }

func (k Kind) String() string { return string(k.OrChat()) }

// MarshalText writes the name ("" stays "", so omitempty keeps old
// records' bytes).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k), nil }

// UnmarshalText parses like Parse, so records and flags accept the same
// spellings.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
