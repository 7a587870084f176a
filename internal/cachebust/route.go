package cachebust

import (
	"fmt"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/request"
)

// Slot is the message a marker lands in.
type Slot uint8

const (
	// NoSlot: no marker (target None).
	NoSlot Slot = iota
	// SharedSystemPrompt: the conversation's system prompt. compose shrinks
	// the synthetic system prompt by the marker cost; on the wire it is the
	// first message when that message has role "system".
	SharedSystemPrompt
	// FirstUserTurn: the first user message of the whole history (not the
	// current turn), so every request of a conversation carries the marker
	// in the same place. compose shrinks the first turn's budget.
	FirstUserTurn
)

func (s Slot) String() string {
	switch s {
	case SharedSystemPrompt:
		return "shared_system_prompt"
	case FirstUserTurn:
		return "first_user_turn"
	default:
		return "none"
	}
}

// Landing is where a marker goes: the slot and the end of its text.
type Landing struct {
	Slot   Slot
	Prefix bool // marker at the start (true) or end (false); false for NoSlot
}

func (l Landing) String() string {
	switch {
	case l.Slot == NoSlot:
		return "none"
	case l.Prefix:
		return l.Slot.String() + "/prefix"
	default:
		return l.Slot.String() + "/suffix"
	}
}

// MarshalText writes the String form ("first_user_turn/prefix", "none"),
// so probe records can show where the marker was routed.
func (l Landing) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses the String form.
func (l *Landing) UnmarshalText(b []byte) error {
	for _, slot := range []Slot{NoSlot, SharedSystemPrompt, FirstUserTurn} {
		for _, prefix := range []bool{true, false} {
			c := Landing{Slot: slot, Prefix: prefix && slot != NoSlot}
			if c.String() == string(b) {
				*l = c
				return nil
			}
		}
	}
	return fmt.Errorf("invalid cache-bust landing %q", b)
}

// Route is the single routing table that compose (budgets) and send
// (injection, via RouteMessages) share:
//
//	target               system prompt?  lands on
//	none                 any             nowhere
//	system_prefix/suffix yes             SharedSystemPrompt
//	system_prefix/suffix no              FirstUserTurn (AIPerf's worker fallback)
//	first_turn_*         any             FirstUserTurn
//
// Prefix/suffix orientation follows the target in every case (a system
// target that falls back keeps its end). hasSystemPrompt must be true
// whenever the conversation will carry a system message on the wire,
// including a verbatim one: AIPerf's composer counts only a synthetic
// --shared-system-prompt-length there and so wrongly charges the first turn
// when a verbatim --system-prompt receives the marker.
func Route(t Target, hasSystemPrompt bool) Landing {
	switch t {
	case SystemPrefix, SystemSuffix:
		if hasSystemPrompt {
			return Landing{Slot: SharedSystemPrompt, Prefix: t.IsPrefix()}
		}
		return Landing{Slot: FirstUserTurn, Prefix: t.IsPrefix()}
	case FirstTurnPrefix, FirstTurnSuffix:
		return Landing{Slot: FirstUserTurn, Prefix: t.IsPrefix()}
	default:
		return Landing{}
	}
}

// RouteEndpoint is Route for a request to endpoint k. Chat and responses
// follow the table (a Responses request's instructions are its system
// message: the server makes them one). A completions prompt is bare text
// with no system message: it is the first user turn, so prefix targets go
// at its start, suffix targets at its end, and a system target falls back
// to it as AIPerf's worker falls back to the first turn.
func RouteEndpoint(k endpoint.Kind, t Target, hasSystemPrompt bool) Landing {
	if !k.Templated() {
		hasSystemPrompt = false
	}
	return Route(t, hasSystemPrompt)
}

// RouteMessages applies Route to a wire message array: the conversation
// has a system prompt when messages[0] has role "system" (AIPerf's worker
// looks only at the first message). It returns the landing and the index
// of the message that receives the marker, or -1 when there is none (None,
// or a history without any user message).
func RouteMessages(t Target, messages []request.Message) (Landing, int) {
	hasSystem := len(messages) > 0 && messages[0].Role == "system"
	l := Route(t, hasSystem)
	switch l.Slot {
	case SharedSystemPrompt:
		return l, 0
	case FirstUserTurn:
		for i, m := range messages {
			if m.Role == "user" {
				return l, i
			}
		}
	}
	return l, -1
}
