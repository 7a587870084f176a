package send

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/wire"
)

// composeFor runs probe and compose for endpoint ep on model name ("" =
// the embedded default), as the command line does.
func composeFor(t *testing.T, name string, ep endpoint.Kind, target cachebust.Target, opts compose.Options) ([]records.Conversation, *compose.Model) {
	t.Helper()
	opts.Exact, opts.Workers, opts.ISLSet, opts.TurnsSet = true, 2, true, true
	return composeConversations(t, name, ep, target, opts)
}

// probeModel is `probe --endpoint ep --cache-bust target` (with the
// template where the endpoint has one) on model name, parsed once per
// test binary, and the model to compose with, its clock pinned.
func probeModel(t testing.TB, name string, ep endpoint.Kind, target cachebust.Target) (*records.Probe, *compose.Model) {
	t.Helper()
	src := testmodel.Source(t, name)
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: ep.Templated(), CacheBust: target, Now: pinnedNow, Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromSource(src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m.Now = pinnedNow
	return p, m
}

// composedRecords runs a composer's Run into JSONL and reads the
// conversations back as send reads them.
func composedRecords(t testing.TB, run func(context.Context, *jsonl.Writer) error) []records.Conversation {
	t.Helper()
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadConversations(&buf, "composed")
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

// composeConversations is `probe --endpoint ep --cache-bust target (with
// the template where the endpoint has one) | compose` with options o, on
// model name parsed once per test binary, and the model it composed with.
func composeConversations(t testing.TB, name string, ep endpoint.Kind, target cachebust.Target, o compose.Options) ([]records.Conversation, *compose.Model) {
	t.Helper()
	p, m := probeModel(t, name, ep, target)
	o.Endpoint = ep
	if o.BenchmarkID == "" {
		o.BenchmarkID = testutil.SeedBenchmarkID(o.Seed) // the same markers, and replies, every run
	}
	c, err := compose.New(p, m, "", o)
	if err != nil {
		t.Fatal(err)
	}
	convs := composedRecords(t, c.Run)
	for i := range convs {
		if convs[i].Endpoint.Or() != ep {
			t.Fatalf("conversation %s composed for %q, want %s", convs[i].ID, convs[i].Endpoint, ep)
		}
	}
	return convs, m
}

// TestEndpointsLiveUsage: against the test server (which counts as vLLM
// does, checked in its own tests), every request of both endpoints,
// streamed or not, reports the count compose and the dry run promised:
// exactly --isl for first requests; a later Responses turn, whose history
// holds the server's real reply, the count of that very request
// (serverprofile.PromptOf over the live history).
func TestEndpointsLiveUsage(t *testing.T) {
	for _, name := range []string{"", "mistral7b"} { // mistral's tokenizer adds a BOS
		for _, ep := range []endpoint.Kind{endpoint.Completions, endpoint.Responses} {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", name, ep, stream), func(t *testing.T) {
					target, turns, system := cachebust.SystemSuffix, 1, 0
					if ep == endpoint.Responses {
						turns = 3
						if name == "" { // Mistral v0.1's template refuses a system message
							system = 40
						}
					}
					convs, m := composeFor(t, name, ep, target, compose.Options{ISL: 100, OSL: 6, Conversations: 3, Turns: turns, SharedSystemPromptLength: system, Seed: 3, Model: "m"})
					src := testmodel.Source(t, name)
					var mu sync.Mutex
					counted := map[string]int{}
					s := testserver.StartTest(t, testserver.Config{Model: src})
					s.Observe = func(body []byte, prompt int) {
						mu.Lock()
						counted[string(body)] = prompt
						mu.Unlock()
					}
					b := newBuilder(t, PayloadOptions{Stream: stream})
					dry, _ := dryRunRecords(t, convs, b, Shard{})
					var out bytes.Buffer
					sum, err := Run(context.Background(), &out, convs, b, Config{URL: s.URL(), Endpoint: ep, Concurrency: 2, Timeout: 30 * time.Second}, Wiring{})
					if err != nil || sum.Failed != 0 || sum.Requests != len(dry) {
						t.Fatalf("run: %+v, %v", sum, err)
					}
					live := liveRecords(t, &out)
					byKey := map[string]records.Request{}
					for _, r := range live {
						byKey[fmt.Sprint(r.ConversationID, "/", r.Turn)] = r
					}
					for _, d := range dry {
						if d.Endpoint != ep || d.ExpectedISL == nil || *d.ExpectedISL != d.TargetISL {
							t.Fatalf("dry run %s turn %d: endpoint %q expected %v target %d", d.ConversationID, d.Turn, d.Endpoint, d.ExpectedISL, d.TargetISL)
						}
						l := byKey[fmt.Sprint(d.ConversationID, "/", d.Turn)]
						testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, l))
						if l.Result == nil || !l.Result.OK || l.Result.Usage == nil || l.Result.Usage.PromptTokens == nil {
							t.Fatalf("%s turn %d: %+v", d.ConversationID, d.Turn, l.Result)
						}
						got := *l.Result.Usage.PromptTokens
						if server := counted[string(l.Payload)]; server != got {
							t.Errorf("%s turn %d: usage %d, the server counted %d", d.ConversationID, d.Turn, got, server)
						}
						want := *d.ExpectedISL
						if d.Turn > 0 {
							want = liveCount(t, convs, l, byKey, m)
						}
						if got != want {
							t.Errorf("%s turn %d: usage %d, want %d (target %d)", d.ConversationID, d.Turn, got, want, d.TargetISL)
						}
						if l.Result.Usage.CompletionTokens != d.MaxTokens || l.Result.OutputText == "" || (stream && l.Result.TTFTNs == nil) {
							t.Errorf("%s turn %d: result %+v", d.ConversationID, d.Turn, l.Result)
						}
						if d.Turn == 0 && !bytes.Equal(l.Payload, d.Payload) {
							t.Errorf("%s: live first payload differs from the dry run's", d.ConversationID)
						}
					}
				})
			}
		}
	}
}

// liveCount is our count of a live later request: the conversation's
// messages with the server's earlier replies as history.
func liveCount(t *testing.T, convs []records.Conversation, l records.Request, byKey map[string]records.Request, m *compose.Model) int {
	t.Helper()
	var c *records.Conversation
	for i := range convs {
		if convs[i].ID == l.ConversationID {
			c = &convs[i]
		}
	}
	replies := make([]string, l.Turn)
	for k := range replies {
		replies[k] = byKey[fmt.Sprint(l.ConversationID, "/", k)].Result.OutputText
	}
	req, err := wire.Build(c, l.Turn, l.Marker, replies)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := serverprofile.PromptOf(serverprofile.VLLM, req, m.Template, m.Now)
	if err != nil {
		t.Fatal(err)
	}
	return pr.Count(m.Tokenizer)
}

// TestEndpointsFaults: with the server injecting faults on both
// endpoints, streamed or not, every request gives exactly one record,
// each failure classified as the fault injected.
func TestEndpointsFaults(t *testing.T) {
	noStall := []string{testserver.Fault500, testserver.Fault429, testserver.FaultReset, testserver.FaultTruncate}
	for _, ep := range []endpoint.Kind{endpoint.Completions, endpoint.Responses} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", ep, stream), func(t *testing.T) {
				turns := 1
				if ep == endpoint.Responses {
					turns = 3
				}
				convs := dataset(20, turns)
				for i := range convs {
					convs[i].Endpoint = ep
				}
				s := testserver.StartTest(t, testserver.Config{NoTokenize: true, FaultRate: 0.3, Faults: noStall, Seed: 11})
				var out bytes.Buffer
				const n = 300
				sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: stream}),
					Config{URL: s.URL(), Endpoint: ep, Concurrency: 8, Requests: n, Recycle: true, Timeout: time.Minute}, Wiring{})
				if err != nil {
					t.Fatal(err)
				}
				recs := liveRecords(t, &out)
				retried := 0
				seen := map[string]bool{}
				got := map[string]int{}
				for _, r := range recs {
					k := fmt.Sprint(r.ConversationID, "/", r.Pass, "/", r.Turn)
					if seen[k] {
						t.Errorf("duplicate record %s", k)
					}
					seen[k] = true
					if r.Result.Retried {
						retried++
					}
					if r.Endpoint != ep {
						t.Errorf("record endpoint %q", r.Endpoint)
					}
					if !r.Result.OK {
						got[r.Result.Error.Kind]++
					}
				}
				// The server reads each request whole before its reset: none
				// is sent again (issue 27 item 2).
				if len(recs) != n || sum.Requests != n || s.Requests() != n || retried != 0 {
					t.Fatalf("%d records, summary %d, server saw %d (%d retried); want %d, none retried", len(recs), sum.Requests, s.Requests(), retried, n)
				}
				want := map[string]int{}
				for f, c := range s.Faults() {
					want[wantKind[f]] += c
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("errors by kind %v, server injected %v", got, want)
				}
			})
		}
	}
}
