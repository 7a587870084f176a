package budget

import (
	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
)

// Compensation is everything compose subtracts, computed once per run.
type Compensation struct {
	// MarkerTokens is the estimated marker cost (0 for target none).
	MarkerTokens int `json:"marker_tokens"`
	// MarkerSamples are the estimator's per-sample counts.
	MarkerSamples []int `json:"marker_samples,omitempty"`
	// Landing is where send will put the marker (cachebust.Route).
	Landing cachebust.Landing `json:"landing"`
	// Template is the chat-template overhead; zero when the chat template
	// is not applied.
	Template records.TemplateOverhead `json:"template"`
}

// firstTurnMarker is the marker cost charged to the first user turn.
func (c Compensation) firstTurnMarker() int {
	if c.Landing.Slot == cachebust.FirstUserTurn {
		return c.MarkerTokens
	}
	return 0
}

// FirstTurnAdjustment is what the first user turn gives up: the request's
// fixed template cost (the first turn "owns" BOS and the generation prompt),
// its own message wrap, and the marker when the marker lands there.
func (c Compensation) FirstTurnAdjustment() int {
	return c.Template.Fixed + c.Template.Wrap + c.firstTurnMarker()
}

// LaterTurnAdjustment is what each later user turn gives up: its wrap only.
func (c Compensation) LaterTurnAdjustment() int {
	return c.Template.Wrap
}

// TurnBudget is the bare-text token count to generate for a user turn so
// that, wrapped and marked, it occupies isl tokens on the wire. It never
// goes below 1: a prompt generator can make one token, not zero.
func (c Compensation) TurnBudget(isl int, first bool) int {
	adj := c.LaterTurnAdjustment()
	if first {
		adj = c.FirstTurnAdjustment()
	}
	return max(1, isl-adj)
}

// SystemPromptLength is the synthetic system prompt length to generate for
// a requested length: reduced by the marker cost when the marker lands on
// the system prompt, so the wire system message is length tokens; floored
// at 1. Otherwise length is returned unchanged.
func (c Compensation) SystemPromptLength(length int) int {
	if c.Landing.Slot != cachebust.SharedSystemPrompt {
		return length
	}
	return max(1, length-c.MarkerTokens)
}
