package send

import (
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestExactEstimateMissed: where the count of a resized text's changed
// end does not tell the request's count, send --exact still sends an
// exact request: the render of the text found disagrees and the search
// is done again with a render per candidate. Llama 3's template trims
// each message, so a text that ends in a space (here the reserve is
// words two spaces apart, a lone space a token of its own) counts a token
// less than its end alone said. Every turn, whatever the length of the
// reply before it, counts its target by the test server's count, and some
// took more than one render (the fallback ran).
func TestExactEstimateMissed(t *testing.T) {
	convs := liveConversations(t, "llama3", cachebust.FirstTurnSuffix, compose.Options{ISL: 64, OSL: 24, Conversations: 2, Turns: 2, Seed: 5})
	s := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, "llama3"), Now: pinnedNow})
	z := exactSizer(t, "llama3", convs)
	b := newBuilder(t, PayloadOptions{})
	words := strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor")
	var reserve strings.Builder
	for i := range 80 {
		reserve.WriteString(" " + words[i%len(words)] + " ")
	}
	fallbacks := 0
	for i := range convs {
		orig := convs[i]
		orig.Turns = slices.Clone(orig.Turns)
		orig.Turns[1].Reserve = reserve.String()
		for n := 1; n <= 8; n++ {
			c := orig
			c.Turns = slices.Clone(orig.Turns)
			var st exact.Session
			if _, err := exact.Fit(z, b, &c, &orig.Turns[0], 0, 0, nil, &st); err != nil {
				t.Fatal(err)
			}
			replies := []string{strings.Join(words[:n], " ")}
			r0, _ := z.Renders()
			sz, err := exact.Fit(z, b, &c, &orig.Turns[1], 1, 0, replies, &st)
			if err != nil {
				t.Fatal(err)
			}
			r1, _ := z.Renders()
			got, err := s.CountBody(sz.Built.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got != orig.Turns[1].TargetISL || sz.Unreachable != nil {
				t.Errorf("%s turn 1 after a %d-word reply: the server counts %d, target %d (send %d, unreachable %+v)", c.ID, n, got, orig.Turns[1].TargetISL, sz.Wire, sz.Unreachable)
			}
			if r1-r0 > 1 {
				fallbacks++
			}
		}
	}
	if fallbacks == 0 {
		t.Error("every text found was confirmed by its render: the fallback never ran")
	}
}
