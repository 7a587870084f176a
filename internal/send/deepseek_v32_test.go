package send

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestExactLiveDeepSeekV32: probe | compose --live | send --exact for a
// deepseek_v32 model (the renderer chosen by its config.json model_type,
// nowhere named) against a test server that serves it through the encoder
// (testserver.TestDeepSeekV32OverHTTP: the reference's counts) and replies
// at random lengths: every request, first and later turns, every
// cache-bust target, counts exactly its target_isl by the server's usage.
func TestExactLiveDeepSeekV32(t *testing.T) {
	dir := testutil.DeepSeekV32Model(t)
	src, err := modelsrc.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := testserver.StartTest(t, testserver.Config{Model: src, Now: pinnedNow, RandomStop: true, Seed: 11})
	targets := cachebust.Targets()
	if testing.Short() {
		targets = []cachebust.Target{cachebust.FirstTurnSuffix, cachebust.SystemPrefix}
	}
	for _, target := range targets {
		t.Run(target.String(), func(t *testing.T) {
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinnedNow})
			if err != nil {
				t.Fatal(err)
			}
			m, err := compose.LoadModelWith(p, model.Options{Tokenizer: dir})
			if err != nil {
				t.Fatal(err)
			}
			if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != serverprofile.RendererDeepSeekV32 {
				t.Fatalf("compose's renderer %q", got)
			}
			m.Now = pinnedNow
			o := compose.Options{ISL: 300, OSL: 24, Conversations: 3, Turns: 3, Seed: 5, SharedSystemPromptLength: 80,
				Exact: true, Live: true, Workers: 1, Model: "m", ISLSet: true, OSLSet: true, TurnsSet: true, Endpoint: endpoint.Chat}
			o.BenchmarkID = testutil.SeedBenchmarkID(o.Seed) // the same markers, and replies, every run
			c, err := compose.New(p, m, "", o)
			if err != nil {
				t.Fatal(err)
			}
			convs := composedRecords(t, c.Run)
			f, err := exact.ComposedFor(convs)
			if err != nil {
				t.Fatal(err)
			}
			sm, err := model.PinnedFromSource(src, *f, "", "", exact.PinNamed, exact.PinFix(*f))
			if err != nil {
				t.Fatal(err)
			}
			if got := serverprofile.RendererOf(serverprofile.VLLM, sm.Template); got != serverprofile.RendererDeepSeekV32 {
				t.Fatalf("send's renderer %q", got)
			}
			var out bytes.Buffer
			sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
				Config{URL: s.URL(), Endpoint: endpoint.Chat, Timeout: time.Minute, Concurrency: 2}, Wiring{Sizer: exact.NewSizer(sm, serverprofile.VLLM)})
			if err != nil || sum.Failed != 0 {
				t.Fatalf("%+v %v", sum, err)
			}
			recs := liveRecords(t, &out)
			if len(recs) != 9 {
				t.Fatalf("%d records", len(recs))
			}
			for _, r := range recs {
				u := r.Result.Usage
				if u == nil || u.PromptTokens == nil || *u.PromptTokens != r.TargetISL || r.ExpectedISL == nil || *r.ExpectedISL != r.TargetISL || r.Unreachable != nil {
					t.Errorf("%s turn %d: server counts %v, send %v, target %d, unreachable %+v", r.ConversationID, r.Turn, u, r.ExpectedISL, r.TargetISL, r.Unreachable)
				}
			}
		})
	}
}
