package serverprofile

import (
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
)

// Step is one rule family's share of a gap between two profiles.
type Step struct {
	Cause  string
	Tokens int
}

// Explain counts ex under other and splits primaryCount − that count by
// rule family: starting from other's rules, the families are switched to
// primary's one at a time, in Axis order, and each switch's change in the
// count is that family's share. The shares add up to the gap. A switch
// whose intermediate request cannot be counted (a refusal, a template
// error) passes its share on to the next switch that can.
func Explain(primary Profile, primaryCount int, other Profile, ex *extract.Inputs, t *chat.Template, tok Counter, now time.Time, noTools bool) (int, []Step, error) {
	r := RulesOf(other)
	base, err := countRules(r, ex, t, tok, now, noTools)
	if err != nil {
		return 0, nil, err
	}
	var steps []Step
	prev := base
	for a := Axis(0); a < numAxes; a++ {
		if r[a] == primary {
			continue
		}
		r[a] = primary
		c := primaryCount
		if r != RulesOf(primary) {
			if c, err = countRules(r, ex, t, tok, now, noTools); err != nil {
				continue
			}
		}
		if c != prev {
			steps = append(steps, Step{Cause: a.Cause(), Tokens: c - prev})
		}
		prev = c
	}
	return base, steps, nil
}

func countRules(r Rules, ex *extract.Inputs, t *chat.Template, tok Counter, now time.Time, noTools bool) (int, error) {
	pr, err := RenderRules(r, ex, t, now, noTools, nil)
	if err != nil {
		return 0, err
	}
	return pr.Count(tok), nil
}

// WithoutTools makes r render no tools and count the tool texts bare on
// top, as AIPerf does (measure --no-tools).
func (r *Request) WithoutTools(ex *extract.Inputs) {
	r.Tools, r.FlatTools = nil, nil
	r.BareTexts = ex.ToolTexts
}

// WithEmptyContents is a copy of r whose message contents are empty, for
// measuring the template's own tokens.
func (r *Request) WithEmptyContents() *Request {
	cp := *r
	cp.Messages = make([]chat.Object, len(r.Messages))
	for i, m := range r.Messages {
		o := append(chat.Object{}, m...)
		if j := index(o, "content"); j >= 0 {
			if _, ok := o[j].Value.(string); ok {
				o[j].Value = ""
			} else if o[j].Value != nil {
				o[j].Value = []chat.Object{}
			}
		}
		cp.Messages[i] = o
	}
	cp.Suffix = ""
	return &cp
}
