// Package budget holds islkit's ISL compensation arithmetic, after NVIDIA
// AIPerf's (docs/reference/aiperf-behaviour.md §3–4 and the seed
// docs/seeds/isl-budget-compensation.md): a chat-template probe that splits template
// overhead into a per-request fixed cost and a per-message wrap, and the
// per-turn budgets that subtract those and the cache-bust marker so the
// wire payload reaches the requested ISL.
package budget

import (
	"fmt"
	"math"

	"github.com/islkit/islkit/internal/records"
)

// The probe texts, AIPerf's _CHAT_TEMPLATE_PROBE_SAMPLES (§3.2).
const (
	ProbeSampleGreeting = "Hello, how are you today?"
	ProbeSampleCode     = "Could you write a Python function to reverse a string?"
	ProbeSampleNetwork  = "What's the difference between TCP and UDP in networking?"
)

// ProbeSamples returns the three probe texts in AIPerf's order.
func ProbeSamples() []string {
	return []string{ProbeSampleGreeting, ProbeSampleCode, ProbeSampleNetwork}
}

// Message is one chat message given to a Renderer.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Renderer renders messages through the model's chat template with the
// generation prompt added (as a server does) and returns the token count
// of the result. It returns an error when the model has no chat template or
// rendering fails; the probe then gives up without compensating.
type Renderer func(messages []Message) (int, error)

// Counter counts the tokens of bare text, without special tokens.
type Counter interface {
	Count(text string) int
}

// ProbeChatTemplate measures chat-template overhead under the model
//
//	wire = per_request_fixed + Σ_messages (per_msg_wrap + content tokens)
//
// For each probe sample S it renders [user S] and [user S, assistant S,
// user S] (a shape every mainstream template accepts, unlike two user turns
// in a row) and solves the two equations. Following AIPerf (§3.3), the
// per-sample values stay floats, are averaged over the samples, and only
// the means are rounded half-to-even (Python's round). It calls render
// exactly twice per sample.
//
// It returns zeros with a Reason, compensating nothing, when render is nil
// (no chat template), when render fails, or as soon as a sample gives a
// negative wrap or fixed cost: under-compensating is safer than trusting a
// template that breaks the model. The samples measured so far are kept in
// the result for the probe record.
func ProbeChatTemplate(render Renderer, c Counter) records.TemplateOverhead {
	if render == nil {
		return records.TemplateOverhead{Reason: "no chat template"}
	}
	var out records.TemplateOverhead
	var sumWrap, sumFixed float64
	for _, text := range ProbeSamples() {
		single, err := render([]Message{{"user", text}})
		if err != nil {
			return fail(out, fmt.Sprintf("rendering [user] failed: %v", err))
		}
		triple, err := render([]Message{{"user", text}, {"assistant", text}, {"user", text}})
		if err != nil {
			return fail(out, fmt.Sprintf("rendering [user, assistant, user] failed: %v", err))
		}
		s := records.SampleOverhead{Text: text, Bare: c.Count(text), Single: single, Triple: triple}
		s.Wrap = float64(s.Triple-s.Single-2*s.Bare) / 2
		s.Fixed = float64(s.Single-s.Bare) - s.Wrap
		out.Samples = append(out.Samples, s)
		if s.Wrap < 0 || s.Fixed < 0 {
			return fail(out, fmt.Sprintf("implausible overhead for sample %q: wrap %g, fixed %g", text, s.Wrap, s.Fixed))
		}
		sumWrap += s.Wrap
		sumFixed += s.Fixed
	}
	n := float64(len(out.Samples))
	out.Wrap = int(math.RoundToEven(sumWrap / n))
	out.Fixed = int(math.RoundToEven(sumFixed / n))
	return out
}

func fail(o records.TemplateOverhead, reason string) records.TemplateOverhead {
	return records.TemplateOverhead{Samples: o.Samples, Reason: reason}
}
