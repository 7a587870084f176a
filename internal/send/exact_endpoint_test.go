package send

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// liveEndpointConversations is liveConversations for endpoint ep: probe
// --endpoint ep (with the template where the endpoint has one) | compose
// --live --endpoint ep.
func liveEndpointConversations(t testing.TB, name string, ep endpoint.Kind, target cachebust.Target, o compose.Options) []records.Conversation {
	t.Helper()
	o.Exact, o.Live, o.Workers, o.Model = true, true, 1, "m"
	o.ISLSet, o.OSLSet, o.TurnsSet = true, true, true
	convs, _ := composeConversations(t, name, ep, target, o)
	return convs
}

// runExactEndpoint sends convs with --exact to endpoint ep of a
// vLLM-counting test server whose replies stop at random lengths, with
// the load options o (URL, endpoint, sizer and timeout filled in).
func runExactEndpoint(t *testing.T, name string, ep endpoint.Kind, convs []records.Conversation, stream bool, o Config) ([]records.Request, Summary) {
	t.Helper()
	return runSized(t, name, ep, convs, stream, true, o)
}

// runSized is runExactEndpoint with the test server's random stop on or
// off. Every record must validate, and every request must take about one
// whole-request render (the first guess needs none; one confirms it),
// recycled or not: a recycle pass's first turns are predicted with their
// own marker, whatever pass a worker took (TestExactRecycleFirstTurn
// checks each such request alone).
func runSized(t *testing.T, name string, ep endpoint.Kind, convs []records.Conversation, stream, randomStop bool, o Config) ([]records.Request, Summary) {
	t.Helper()
	s := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, name), Now: pinnedNow, RandomStop: randomStop, Seed: 11})
	var out bytes.Buffer
	z := exactSizer(t, name, convs)
	o.URL, o.Endpoint, o.Timeout = s.URL(), ep, time.Minute
	if o.Concurrency == 0 && o.Rate == 0 {
		o.Concurrency = 2
	}
	sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: stream}), o, Wiring{Sizer: z})
	if err != nil || sum.Failed != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	if renders, requests := z.Renders(); requests != int64(sum.Requests) || renders > requests*5/4 {
		t.Errorf("%d whole-request renders for %d requests (%d sized): want about one each", renders, sum.Requests, requests)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		testutil.ValidateSchema(t, "request.schema.json", l)
	}
	return liveRecords(t, &out), sum
}

// checkExact fails for every record whose server usage (input_tokens for
// Responses, prompt_tokens for completions, both recorded as
// prompt_tokens) or send's own count is not its target_isl.
func checkExact(t *testing.T, ep endpoint.Kind, recs []records.Request) {
	t.Helper()
	for i := range recs {
		r := &recs[i]
		u := r.Result.Usage
		if r.Endpoint.Or() != ep || u == nil || u.PromptTokens == nil || *u.PromptTokens != r.TargetISL || r.ExpectedISL == nil || *r.ExpectedISL != r.TargetISL || r.Unreachable != nil {
			t.Errorf("%s pass %d turn %d (%s): server counts %s, send %s, target %d, unreachable %+v",
				r.ConversationID, r.Pass, r.Turn, r.Endpoint, promptTokens(u), intp(r.ExpectedISL), r.TargetISL, r.Unreachable)
		}
	}
}

// responsesInput is what a Responses payload carries: the instructions
// and the input message items.
type responsesInput struct {
	Instructions *string `json:"instructions"`
	Input        []struct {
		Type, Role, Content string
	} `json:"input"`
}

// TestExactLiveResponses: send --exact on /v1/responses. Against a server
// that counts as vLLM does (Responses → messages, rendered, encoded with
// special tokens) and whose replies stop at random lengths, every request
// of 4-turn conversations reports usage.input_tokens equal to its
// target_isl, for every cache-bust target, with and without a shared
// system prompt (sent as instructions), on the embedded Qwen3 and on
// Llama 3 (whose template prints a BOS the server doubles). Later turns
// carry the server's real replies as assistant items, and at least one
// turn had to be resized.
func TestExactLiveResponses(t *testing.T) {
	models := []string{"", "llama3"}
	targets := cachebust.Targets()
	if testing.Short() {
		models, targets = models[:1], []cachebust.Target{cachebust.FirstTurnSuffix, cachebust.SystemPrefix}
	}
	for _, name := range models {
		for _, target := range targets {
			for _, system := range []int{0, 40} {
				t.Run(name+"/"+target.String()+"/"+map[bool]string{true: "instructions", false: "noinstructions"}[system > 0], func(t *testing.T) {
					convs := liveEndpointConversations(t, name, endpoint.Responses, target, compose.Options{ISL: 64, OSL: 24, Conversations: 3, Turns: 4, Seed: 5,
						SharedSystemPromptLength: system})
					recs, _ := runExactEndpoint(t, name, endpoint.Responses, convs, true, Config{})
					if len(recs) != 12 {
						t.Fatalf("%d records, want 12", len(recs))
					}
					checkExact(t, endpoint.Responses, recs)
					byTurn := map[string]string{}
					for _, r := range recs {
						byTurn[r.ConversationID+"/"+string(rune('0'+r.Turn))] = r.Result.OutputText
					}
					resized := 0
					for _, r := range recs {
						if r.ResizedFrom != nil {
							resized++
						}
						var body responsesInput
						if err := json.Unmarshal(r.Payload, &body); err != nil {
							t.Fatal(err)
						}
						if (body.Instructions != nil) != (system > 0) {
							t.Errorf("%s turn %d: instructions %v with a %d-token system prompt", r.ConversationID, r.Turn, body.Instructions, system)
						}
						if len(body.Input) != 2*r.Turn+1 {
							t.Fatalf("%s turn %d: %d input items", r.ConversationID, r.Turn, len(body.Input))
						}
						for k := 0; k < r.Turn; k++ {
							// Live history is the server's reply, never compose's.
							if got, want := body.Input[2*k+1].Content, byTurn[r.ConversationID+"/"+string(rune('0'+k))]; got != want {
								t.Errorf("%s turn %d: history reply %d is %.40q, the server replied %.40q", r.ConversationID, r.Turn, k, got, want)
							}
						}
					}
					if resized == 0 {
						t.Error("no turn resized: the random replies should have needed some")
					}
				})
			}
		}
	}
}

// TestExactLiveCompletions: send --exact on /v1/completions, one request
// per conversation and recycled, so each later pass carries a new marker
// whose count may differ by a token from compose's. On the embedded Qwen3
// (no special tokens added) and on Mistral 7B (whose tokenizer adds a BOS
// the server counts), every request reports usage.prompt_tokens equal to
// its target_isl, for every cache-bust target.
func TestExactLiveCompletions(t *testing.T) {
	models := []string{"", "mistral7b"}
	targets := cachebust.Targets()
	if testing.Short() {
		targets = []cachebust.Target{cachebust.FirstTurnPrefix, cachebust.SystemSuffix}
	}
	for _, name := range models {
		for _, target := range targets {
			t.Run(name+"/"+target.String(), func(t *testing.T) {
				convs := liveEndpointConversations(t, name, endpoint.Completions, target, compose.Options{ISL: 48, OSL: 8, Conversations: 3, Turns: 1, Seed: 4})
				recs, _ := runExactEndpoint(t, name, endpoint.Completions, convs, false, Config{Recycle: true, Requests: 9})
				if len(recs) != 9 {
					t.Fatalf("%d records, want 9", len(recs))
				}
				checkExact(t, endpoint.Completions, recs)
				for _, r := range recs {
					var body struct{ Prompt string }
					if err := json.Unmarshal(r.Payload, &body); err != nil || body.Prompt == "" {
						t.Fatalf("%s: payload %s: %v", r.ConversationID, r.Payload, err)
					}
					if r.Marker != "" && !strings.Contains(body.Prompt, r.Marker) {
						t.Errorf("%s pass %d: marker %q not in the prompt", r.ConversationID, r.Pass, r.Marker)
					}
				}
			})
		}
	}
}

// promptTokens is a usage's prompt count for a message ("none" without).
func promptTokens(u *records.Usage) string {
	if u == nil {
		return "no usage"
	}
	return intp(u.PromptTokens)
}

func intp(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

// TestExactWarmupRampUp: --warmup and --ramp-up (of concurrency, and of a
// gamma --rate) with --exact on both endpoints and recycled passes: the
// first three requests to start are marked warmup, every record has its
// intended start and lag, and every request, warmup or not, streamed or
// not, reports usage equal to its target_isl.
func TestExactWarmupRampUp(t *testing.T) {
	for _, ep := range []endpoint.Kind{endpoint.Responses, endpoint.Completions} {
		turns := 3
		if ep == endpoint.Completions {
			turns = 1
		}
		convs := liveEndpointConversations(t, "", ep, cachebust.FirstTurnSuffix, compose.Options{ISL: 48, OSL: 16, Conversations: 2, Turns: turns, Seed: 6})
		for _, o := range []Config{
			{Concurrency: 2, RampUp: 20 * time.Millisecond},
			{Rate: 200, RateDistribution: RateGamma, Burstiness: 0.5, RampUp: 20 * time.Millisecond},
		} {
			t.Run(fmt.Sprintf("%s/rate=%v", ep, o.Rate), func(t *testing.T) {
				o.Warmup, o.Requests, o.Recycle = 3, 6, true
				// Streamed under --concurrency, whole bodies under --rate.
				recs, sum := runExactEndpoint(t, "", ep, convs, o.Rate == 0, o)
				if len(recs) != 9 || sum.Requests != 9 {
					t.Fatalf("%d records (summary %d), want 9", len(recs), sum.Requests)
				}
				checkExact(t, ep, recs)
				sort.Slice(recs, func(i, j int) bool { return recs[i].Result.StartNs < recs[j].Result.StartNs })
				for i, r := range recs {
					res := r.Result
					if r.Warmup != (i < 3) {
						t.Errorf("record %d by start: warmup %v", i, r.Warmup)
					}
					if res.ScheduledNs == nil || res.ScheduleLagNs == nil || *res.ScheduleLagNs != res.StartNs-*res.ScheduledNs {
						t.Errorf("record %d: scheduled %v lag %v start %d", i, res.ScheduledNs, res.ScheduleLagNs, res.StartNs)
					}
					// --exact's sizing is recorded: what of the lag it was.
					if res.SizingNs == nil || *res.SizingNs <= 0 {
						t.Errorf("record %d: sizing_ns %v, want the time --exact took", i, res.SizingNs)
					}
				}
			})
		}
	}
}
