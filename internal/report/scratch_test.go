package report

import (
	"os"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

func TestScratch(t *testing.T) {
	s := NewSummary()
	ip := func(v int) *int { return &v }
	for i := 0; i < 30; i++ {
		tpl := 1000 + i%3 - 1
		isl := records.ISL{Bare: 900, Templated: ip(tpl), Counted: "templated", Target: ip(1000), Expected: ip(1000), TurnIndex: ip(i % 3), Server: ip(tpl + i%2)}
		if i%2 == 1 {
			isl.VsServer = &records.Gap{Total: 1, Causes: []records.Cause{{Cause: records.CauseDoubledBOS, Tokens: 1}}}
		}
		isl.VsTarget = &records.Gap{Total: tpl - 1000, Causes: []records.Cause{{Cause: records.CauseBoundary, Tokens: tpl - 1000}}}
		s.Add(isl)
	}
	s.AddFailure("bad_json")
	s.WriteText(os.Stdout)
	NewSummary().WriteText(os.Stdout)
}
