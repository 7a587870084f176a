package send

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/testserver"
)

// recycleCase is one set of composed conversations whose recycle passes
// TestExactRecycleFirstTurn sizes.
type recycleCase struct {
	name  string // its subtest name
	model string
	convs []records.Conversation
}

// recycleCases composes --live conversations for the embedded Qwen3 and
// every reference model (Mistral 7B's SentencePiece tokenizer has no
// pre-tokenizer, its -metaspace variant one that does not split; Llama
// 3.1's completions add a BOS), for every cache-bust target, on chat and
// Responses (with and without a system prompt where the template takes
// one, two turns) and completions (one prompt).
func recycleCases(t *testing.T) []recycleCase {
	t.Helper()
	var out []recycleCase
	models := []string{"", "llama3", "mistral7b", "mistral7b-metaspace", "llama3_1", "deepseek_v3", "gptoss"}
	if testing.Short() {
		models = models[:1]
	}
	for _, name := range models {
		for _, target := range cachebust.Targets() {
			for _, ep := range endpoint.Kinds() {
				systems, turns := []int{0, 24}, 2
				if ep == endpoint.Completions {
					systems, turns = []int{0}, 1
				}
				if strings.HasPrefix(name, "mistral7b") {
					systems = []int{0} // its template refuses a system message
				}
				isl := 48
				if name == "gptoss" {
					isl = 160 // its template's preamble alone counts about 70
				}
				for _, system := range systems {
					convs := liveEndpointConversations(t, name, ep, target, compose.Options{ISL: isl, OSL: 8, Conversations: 3, Turns: turns, Seed: 4,
						SharedSystemPromptLength: system})
					n := name
					if n == "" {
						n = "qwen3"
					}
					out = append(out, recycleCase{name: n + "/" + string(ep) + "/" + target.String() + "/system=" + map[bool]string{true: "yes", false: "no"}[system > 0], model: name, convs: convs})
				}
			}
		}
	}
	return out
}

// recyclePasses is how many recycle passes each first turn is sized for
// (a run's passes depend on which worker took which session when, up to
// thousands under --rate; these are a sample of the markers any order
// can give).
func recyclePasses() int {
	if testing.Short() {
		return 16
	}
	return 48
}

// TestExactRecycleFirstTurn: for the first turn of a recycle pass, whose
// new marker's digest tokenizes to a count of its own, the count send
// --exact predicts with compose's text is the count of the request as
// rendered and counted whole; sizing it takes one whole-request render,
// the one that confirms the text (a pass whose marker moved the count is
// resized without a second), and the request then counts exactly its
// target: for every pass, target, endpoint and model. Each request is
// checked on its own, so no order of passes can change the outcome. Some
// markers do move the count (the prediction is not merely compose's) and
// some first turns are resized.
func TestExactRecycleFirstTurn(t *testing.T) {
	moved, resized := 0, 0
	for _, rc := range recycleCases(t) {
		t.Run(rc.name, func(t *testing.T) {
			z := exactSizer(t, rc.model, rc.convs)
			b := newBuilder(t, PayloadOptions{})
			for i := range rc.convs {
				orig := &rc.convs[i]
				for pass := range recyclePasses() {
					pred, ok := z.Predict(orig, 0, pass, nil, &exact.Session{})
					built, err := b.Build(orig, 0, pass, nil)
					if err != nil {
						t.Fatal(err)
					}
					n, err := z.Count(built.Body)
					if err != nil {
						t.Fatal(err)
					}
					if !ok || pred != n {
						t.Errorf("%s pass %d (marker %q): predicted %d (%v), the request counts %d (compose's pass 0: %d)", orig.ID, pass, built.Marker, pred, ok, n, *orig.Turns[0].WireISL)
					}
					if n != *orig.Turns[0].WireISL {
						moved++
					}
					c := *orig
					c.Turns = slices.Clone(orig.Turns)
					r0, _ := z.Renders()
					s, err := exact.Fit(z, b, &c, &orig.Turns[0], 0, pass, nil, &exact.Session{})
					if err != nil {
						t.Fatal(err)
					}
					r1, _ := z.Renders()
					if r1-r0 != 1 || s.Wire != orig.Turns[0].TargetISL || s.Unreachable != nil {
						t.Errorf("%s pass %d (marker %q): %d renders, counts %d, target %d, unreachable %+v", c.ID, pass, s.Built.Marker, r1-r0, s.Wire, orig.Turns[0].TargetISL, s.Unreachable)
					}
					if s.ResizedFrom != nil {
						resized++
					}
				}
			}
		})
	}
	if moved == 0 || resized == 0 {
		t.Errorf("%d counts moved by a marker, %d first turns resized: the test shows nothing", moved, resized)
	}
}

// TestRecycledExpectedISL: without --exact, a recycle pass after the first
// sends a marker compose did not count, so its first turn's expected_isl
// is absent (unknown), not compose's pass-0 count (issue 27 item 4: send
// --recycle recorded 200 where the server counted 197–201). Pass 0 keeps
// compose's count, and so does every pass without a marker (its request
// is byte for byte pass 0's).
func TestRecycledExpectedISL(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	wire := 57
	marked := conv("marked", 0, cachebust.FirstTurnPrefix, "", "a")
	plain := conv("plain", 1, cachebust.None, "", "b")
	marked.Turns[0].WireISL, plain.Turns[0].WireISL = &wire, &wire
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, []records.Conversation{marked, plain}, newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 1, Requests: 6, Recycle: true, Timeout: time.Minute}, Wiring{})
	if err != nil || sum.Failed != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	first := map[string][]byte{}
	for _, r := range liveRecords(t, &out) {
		wantKnown := r.Pass == 0 || r.ConversationID == "plain"
		if known := r.ExpectedISL != nil && *r.ExpectedISL == wire; known != wantKnown {
			t.Errorf("%s pass %d: expected_isl %v, want known %v", r.ConversationID, r.Pass, r.ExpectedISL, wantKnown)
		}
		if r.Pass == 0 {
			first[r.ConversationID] = r.Payload
		} else if same := bytes.Equal(r.Payload, first[r.ConversationID]); same != (r.ConversationID == "plain") {
			t.Errorf("%s pass %d: payload same as pass 0: %v", r.ConversationID, r.Pass, same)
		}
	}
}
