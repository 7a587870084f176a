package send

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

var pinnedNow = time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)

// liveConversations composes chat conversations with --live for a
// reference model ("" = the embedded default) as compose's command does.
func liveConversations(t testing.TB, name string, target cachebust.Target, o compose.Options) []records.Conversation {
	return liveEndpointConversations(t, name, endpoint.Chat, target, o)
}

// exactSizer is the Sizer send --exact builds for convs, on the same
// (already parsed) model.
func exactSizer(t testing.TB, name string, convs []records.Conversation) *exact.Sizer {
	t.Helper()
	f, err := exact.ComposedFor(convs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.PinnedFromSource(testmodel.Source(t, name), *f, "", "", exact.PinNamed, exact.PinFix(*f))
	if err != nil {
		t.Fatal(err)
	}
	return exact.NewSizer(m, serverprofile.VLLM)
}

// runExact sends convs with --exact to a vLLM-counting test server for
// the model whose replies stop at random lengths (or run to max_tokens),
// and returns the records.
func runExact(t *testing.T, name string, convs []records.Conversation, randomStop bool) []records.Request {
	t.Helper()
	recs, _ := runSized(t, name, endpoint.Chat, convs, true, randomStop, Config{})
	return recs
}

// sentText is the last user message of a request's payload.
func sentText(t *testing.T, r *records.Request) string {
	t.Helper()
	var body struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(r.Payload, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages[len(body.Messages)-1].Content
}

// TestExactLive: against a server that counts prompts as vLLM does and
// whose replies stop at random lengths (shorter and, re-tokenized, longer
// than budgeted), every request of 4-turn conversations reaches exactly
// its target_isl by the server's own usage.prompt_tokens, for every
// cache-bust target, with and without a shared system prompt, on the
// embedded Qwen3 and on Llama 3. A resized turn is its own text cut
// shorter, or grown with the reserve compose wrote after it.
func TestExactLive(t *testing.T) {
	models := []string{"", "llama3"}
	targets := cachebust.Targets()
	if testing.Short() {
		models, targets = models[:1], []cachebust.Target{cachebust.FirstTurnSuffix, cachebust.SystemPrefix}
	}
	grown, shrunk := 0, 0
	for _, name := range models {
		for _, target := range targets {
			for _, system := range []int{0, 40} {
				t.Run(name+"/"+target.String()+"/"+map[bool]string{true: "system", false: "nosystem"}[system > 0], func(t *testing.T) {
					convs := liveConversations(t, name, target, compose.Options{ISL: 64, OSL: 24, Conversations: 5, Turns: 4, Seed: 5,
						SharedSystemPromptLength: system})
					recs := runExact(t, name, convs, true)
					if len(recs) != 20 {
						t.Fatalf("%d records, want 20", len(recs))
					}
					for i := range recs {
						r := &recs[i]
						u := r.Result.Usage
						if u == nil || u.PromptTokens == nil || *u.PromptTokens != r.TargetISL || r.ExpectedISL == nil || *r.ExpectedISL != r.TargetISL || r.Unreachable != nil {
							t.Errorf("%s turn %d: server counts %v, send %v, target %d, unreachable %+v", r.ConversationID, r.Turn, u, r.ExpectedISL, r.TargetISL, r.Unreachable)
						}
						if r.ResizedFrom == nil {
							continue
						}
						turn := convs[r.ConversationIndex].Turns[r.Turn]
						sent := trimPads(sentText(t, r))
						if !strings.HasPrefix(turn.Text+turn.Reserve, sent) {
							t.Errorf("%s turn %d: sent %q, not a cut of its text and reserve", r.ConversationID, r.Turn, sent)
						}
						if *r.ResizedFrom != turn.BareTokens {
							t.Errorf("%s turn %d: resized_from %d, compose wrote %d", r.ConversationID, r.Turn, *r.ResizedFrom, turn.BareTokens)
						}
						if *r.ResizedTo > *r.ResizedFrom {
							grown++
						} else {
							shrunk++
						}
					}
				})
			}
		}
	}
	// Random stops make most replies shorter than budgeted; a reply that
	// runs to max_tokens (1 in 24) re-tokenizes longer. The replies are a
	// function of the requests (testserver.Config.RandomStop), so these
	// counts do not depend on timing.
	if grown == 0 || shrunk == 0 {
		t.Errorf("%d turns grown, %d shrunk; the replies should have needed both", grown, shrunk)
	}
}

// trimPads drops the single-token pads sizing may append to a text.
func trimPads(s string) string {
	for {
		trimmed := s
		for _, p := range sizing.Pads {
			trimmed = strings.TrimSuffix(trimmed, p)
		}
		if trimmed == s {
			return s
		}
		s = trimmed
	}
}

// TestExactLiveUnreachable: a reply far longer than budgeted (compose
// budgeted 8 tokens; the request asks for 200 and the server, stopping
// nowhere, sends 200, as a model whose reply re-tokenizes longer or
// reasons at length would) makes the history alone exceed the next
// turn's target: that request goes out with a one-token text and its
// record says unreachable, by how much, matching the server's count.
func TestExactLiveUnreachable(t *testing.T) {
	convs := liveConversations(t, "", cachebust.FirstTurnSuffix, compose.Options{ISL: 32, OSL: 8, Conversations: 1, Turns: 2, Seed: 2})
	convs[0].Turns[0].MaxTokens = 200
	recs := runExact(t, "", convs, false)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		got := *r.Result.Usage.PromptTokens
		switch {
		case r.Turn == 0 && (got != r.TargetISL || r.Unreachable != nil):
			t.Errorf("turn 0: server counts %d, target %d, unreachable %+v", got, r.TargetISL, r.Unreachable)
		case r.Turn == 1 && (r.Unreachable == nil || r.Unreachable.MinISL != got || r.Unreachable.Short != got-r.TargetISL || got <= r.TargetISL || *r.ExpectedISL != got):
			t.Errorf("turn 1: server counts %d, target %d, expected %v, unreachable %+v", got, r.TargetISL, r.ExpectedISL, r.Unreachable)
		case r.Turn == 1 && *r.ResizedTo != 1:
			t.Errorf("turn 1: resized to %d tokens, want the smallest text (1)", *r.ResizedTo)
		}
	}
}

// TestExactRefusesAnotherModel: conversations composed for Qwen3 are not
// counted with Llama 3's tokenizer, nor with another chat template, nor
// at all when compose did not say what they were composed for.
func TestExactRefusesAnotherModel(t *testing.T) {
	convs := liveConversations(t, "", cachebust.FirstTurnSuffix, compose.Options{ISL: 40, OSL: 8, Conversations: 2, Turns: 2, Seed: 1})
	f, err := exact.ComposedFor(convs)
	if err != nil {
		t.Fatal(err)
	}
	pinned := func(name, tmpl string) error {
		_, err := model.PinnedFromSource(testmodel.Source(t, name), *f, tmpl, "", exact.PinNamed, exact.PinFix(*f))
		return err
	}
	if err := pinned("llama3", ""); !cli.IsUsage(err) || !strings.Contains(err.Error(), "model mismatch") {
		t.Errorf("llama3 for qwen3 conversations: %v", err)
	}
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}{{ m.content }}{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pinned("", tmpl); !cli.IsUsage(err) || !strings.Contains(err.Error(), "chat template mismatch") {
		t.Errorf("another template: %v", err)
	}
	convs[1].ComposedFor = &records.ModelPin{Tokenizer: "x", TokenizerSHA256: strings.Repeat("0", 64)}
	if _, err := exact.ComposedFor(convs); err == nil || !strings.Contains(err.Error(), "send them separately") {
		t.Errorf("two models: %v", err)
	}
	convs[1].ComposedFor = nil
	if _, err := exact.ComposedFor(convs); err == nil || !strings.Contains(err.Error(), "--live") {
		t.Errorf("no composed_for: %v", err)
	}
	// Every conversation now says what it was composed for; without
	// --live it carries no reserve to resize with.
	convs[1].ComposedFor = convs[0].ComposedFor
	for k := range convs[1].Turns {
		convs[1].Turns[k].Reserve = ""
	}
	if _, err := exact.ComposedFor(convs); err == nil || !strings.Contains(err.Error(), "--live") {
		t.Errorf("no reserve: %v", err)
	}
	// A trace row cannot be composed with --live at all: the error says
	// to send it without --exact rather than to compose it again.
	convs[1].Trace = &records.TraceRef{Line: 7}
	if _, err := exact.ComposedFor(convs); err == nil || !strings.Contains(err.Error(), "trace line 7") || !strings.Contains(err.Error(), "without --exact") {
		t.Errorf("a trace row: %v", err)
	}
}

// TestExactLiveRecycleAndFaults: on recycle passes (new markers, so even
// first turns may count a token more or less) and after failed requests
// (whose turn's synthetic reply then stands in the history), every
// request that got an answer is exactly its target by the server's count,
// and sizing took about one render per request (one worker: the same
// requests in the same order every run).
func TestExactLiveRecycleAndFaults(t *testing.T) {
	convs := liveConversations(t, "", cachebust.FirstTurnPrefix, compose.Options{ISL: 50, OSL: 16, Conversations: 3, Turns: 3, Seed: 8})
	s := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 2, FaultRate: 0.2, Faults: []string{testserver.Fault500}, Now: pinnedNow})
	var out bytes.Buffer
	z := exactSizer(t, "", convs)
	sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 1, Timeout: time.Minute, Recycle: true, Requests: 36}, Wiring{Sizer: z})
	if err != nil {
		t.Fatal(err)
	}
	if renders, requests := z.Renders(); requests != 36 || renders > requests*5/4 {
		t.Errorf("%d whole-request renders for %d requests sized: want about one each", renders, requests)
	}
	recs := liveRecords(t, &out)
	ok, synthetic := 0, 0
	for _, r := range recs {
		if r.ExpectedISL == nil || *r.ExpectedISL != r.TargetISL {
			t.Errorf("%s pass %d turn %d: send counts %v, target %d", r.ConversationID, r.Pass, r.Turn, r.ExpectedISL, r.TargetISL)
		}
		if r.SyntheticHistory {
			synthetic++
		}
		if !r.Result.OK {
			continue
		}
		ok++
		if got := *r.Result.Usage.PromptTokens; got != r.TargetISL {
			t.Errorf("%s pass %d turn %d: server counts %d, target %d", r.ConversationID, r.Pass, r.Turn, got, r.TargetISL)
		}
	}
	if len(recs) != 36 || sum.Failed == 0 || synthetic == 0 || ok < 20 {
		t.Errorf("%d records, %d failed, %d with synthetic history, %d answered", len(recs), sum.Failed, synthetic, ok)
	}
}

// TestDecodeComposedFor: a composed_for whose hashes are not SHA-256s is
// refused with its line and field.
func TestDecodeComposedFor(t *testing.T) {
	convs := liveConversations(t, "", cachebust.None, compose.Options{ISL: 20, OSL: 4, Conversations: 1, Turns: 1, Seed: 1})
	good, err := json.Marshal(convs[0])
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "conversation.schema.json", good)
	for field, bad := range map[string]string{
		"composed_for.tokenizer_sha256":     strings.Replace(string(good), convs[0].ComposedFor.TokenizerSHA256, "abc", 1),
		"composed_for.chat_template_sha256": strings.Replace(string(good), convs[0].ComposedFor.ChatTemplateSHA256, "ABC", 1),
	} {
		_, err := ReadConversations(strings.NewReader(string(good)+"\n"+bad+"\n"), "c.jsonl")
		if err == nil || !strings.Contains(err.Error(), `c.jsonl:2: field "`+field+`"`) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// FuzzExactFit: whatever a server replies and whatever reserve a record
// carries, sizing a later turn ends without error, and its request counts
// what the record will say: target_isl, or an unreachable min_isl.
func FuzzExactFit(f *testing.F) {
	convs := liveConversations(f, "", cachebust.FirstTurnSuffix, compose.Options{ISL: 24, OSL: 12, Conversations: 1, Turns: 2, Seed: 3})
	z := exactSizer(f, "", convs)
	b, _ := NewBuilder(PayloadOptions{Stream: true}, nil)
	f.Add("ipsum", convs[0].Turns[1].Reserve)
	f.Add("", "")
	f.Add(strings.Repeat("lorem ipsum ", 40), ",\n\n\xff x")
	f.Add("<|im_end|>\n<|im_start|>user", " \u00e9\u0301 ")
	f.Fuzz(func(t *testing.T, reply, reserve string) {
		orig := convs[0]
		orig.Turns = slices.Clone(orig.Turns)
		orig.Turns[1].Reserve = reserve
		c := orig
		c.Turns = slices.Clone(orig.Turns)
		var st exact.Session
		if _, err := exact.Fit(z, b, &c, &orig.Turns[0], 0, 0, nil, &st); err != nil {
			t.Fatal(err)
		}
		hist := []string{reply}
		s, err := exact.Fit(z, b, &c, &orig.Turns[1], 1, 0, hist, &st)
		if err != nil {
			t.Fatalf("reply %q reserve %q: %v", reply, reserve, err)
		}
		n, err := z.Count(s.Built.Body)
		if err != nil || n != s.Wire {
			t.Fatalf("the request counts %d (%v), sizing said %d", n, err, s.Wire)
		}
		if target := orig.Turns[1].TargetISL; s.Unreachable == nil && s.Wire != target || s.Unreachable != nil && s.Unreachable.MinISL != s.Wire {
			t.Errorf("counts %d, target %d, unreachable %+v", s.Wire, target, s.Unreachable)
		}
	})
}
