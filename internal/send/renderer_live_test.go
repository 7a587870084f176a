package send

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// exactLiveRenderer is probe | compose --live | send --exact for the model
// src against a test server that serves it with renderer (the server's own
// choice for the model; with forced, --renderer given to the probe and to
// the server) and replies at random lengths: every request, first and
// later turns, every cache-bust target, must count exactly its target_isl
// by the server's usage, and compose and send must both have rendered
// with renderer (it travels from the probe through the conversations'
// pin to send's sizer).
func exactLiveRenderer(t *testing.T, src *modelsrc.Source, renderer string, forced bool, seed uint64, ep endpoint.Kind) {
	t.Helper()
	probeRenderer := ""
	if forced {
		probeRenderer = renderer
	}
	s := testserver.StartTest(t, testserver.Config{Model: src, Now: pinnedNow, RandomStop: true, Seed: seed, Renderer: probeRenderer})
	targets := cachebust.Targets()
	if testing.Short() {
		targets = []cachebust.Target{cachebust.FirstTurnSuffix, cachebust.SystemPrefix}
	}
	for _, target := range targets {
		t.Run(target.String(), func(t *testing.T) {
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinnedNow, Renderer: probeRenderer, Endpoint: ep})
			if err != nil {
				t.Fatal(err)
			}
			if p.ChatTemplate.Renderer != probeRenderer {
				t.Fatalf("probe record renderer %q, want %q", p.ChatTemplate.Renderer, probeRenderer)
			}
			m, err := compose.LoadModelWith(p, model.Options{Tokenizer: src.Name})
			if err != nil {
				t.Fatal(err)
			}
			if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != renderer {
				t.Fatalf("compose renders with %q, want %q", got, renderer)
			}
			m.Now = pinnedNow
			o := compose.Options{ISL: 300, OSL: 24, Conversations: 3, Turns: 3, Seed: 5, SharedSystemPromptLength: 80,
				Exact: true, Live: true, Workers: 1, Model: "m", ISLSet: true, OSLSet: true, TurnsSet: true, Endpoint: ep,
				BenchmarkID: testutil.SeedBenchmarkID(5)} // the same markers, and replies, every run
			c, err := compose.New(p, m, "", o)
			if err != nil {
				t.Fatal(err)
			}
			convs := composedRecords(t, c.Run)
			f, err := exact.ComposedFor(convs)
			if err != nil {
				t.Fatal(err)
			}
			if forced && f.Renderer != renderer {
				t.Fatalf("composed_for.renderer %q, want %q", f.Renderer, renderer)
			}
			sm, err := model.PinnedFromSource(src, *f, "", "", exact.PinNamed, exact.PinFix(*f))
			if err != nil {
				t.Fatal(err)
			}
			if got := serverprofile.RendererOf(serverprofile.VLLM, sm.Template); got != renderer {
				t.Fatalf("send renders with %q, want %q", got, renderer)
			}
			var out bytes.Buffer
			sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
				Config{URL: s.URL(), Endpoint: ep, Timeout: time.Minute, Concurrency: 2}, Wiring{Sizer: exact.NewSizer(sm, serverprofile.VLLM)})
			if err != nil || sum.Failed != 0 {
				t.Fatalf("%+v %v", sum, err)
			}
			recs := liveRecords(t, &out)
			if len(recs) != 9 {
				t.Fatalf("%d records, want 9", len(recs))
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

// TestExactLiveHarmony: gpt-oss, --renderer harmony given to the probe
// (the folder has no config.json); the test server serves it with Harmony
// (testserver.TestHarmonyOverHTTP: openai_harmony's counts).
// scripts/renderers/check-harmony-exact.sh checks the same pipeline against
// openai_harmony itself.
func TestExactLiveHarmony(t *testing.T) {
	exactLiveRenderer(t, testmodel.Source(t, "gptoss"), serverprofile.RendererHarmony, true, 11, endpoint.Chat)
}

// TestExactLiveHarmonyResponses: the same pipeline on the Responses
// endpoint (compose and send --endpoint responses): vLLM's Responses path
// under Harmony, where the instructions (the shared system prompt) do not
// count without a function tool (testserver.TestHarmonyResponsesOverHTTP:
// openai_harmony's counts).
func TestExactLiveHarmonyResponses(t *testing.T) {
	exactLiveRenderer(t, testmodel.Source(t, "gptoss"), serverprofile.RendererHarmony, true, 11, endpoint.Responses)
}

// TestExactLiveMistral: a Mistral-format folder (mistral-common's
// tekken_240911 as tokenizer v7, only tekken.json), the renderer chosen by
// the folder in every tool, with no flag; the test server serves it with
// the mistral renderer (serverprofile.TestMistralMatchesVLLM: vLLM's own
// MistralTokenizer's ids on every corpus body).
func TestExactLiveMistral(t *testing.T) {
	src, err := modelsrc.Resolve(testutil.TekkenFolder(t, "tekken_240911", "v7"))
	if err != nil {
		t.Fatal(err)
	}
	exactLiveRenderer(t, src, serverprofile.RendererMistral, false, 13, endpoint.Chat)
}

// TestExactLiveDeepSeekV32: a deepseek_v32 model, the renderer chosen by
// its config.json model_type, nowhere named; the test server serves it
// through the encoder (testserver.TestDeepSeekV32OverHTTP: the
// reference's counts).
func TestExactLiveDeepSeekV32(t *testing.T) {
	src, err := modelsrc.Resolve(testutil.DeepSeekV32Model(t))
	if err != nil {
		t.Fatal(err)
	}
	exactLiveRenderer(t, src, serverprofile.RendererDeepSeekV32, false, 11, endpoint.Chat)
}

// TestExactLiveMistralSentencePiece: a folder with mistral-common's v7
// SentencePiece model alone (tokenizer.model.v7), the mistral renderer
// chosen by the folder (serverprofile.TestMistralSentencePieceMatchesVLLM:
// vLLM's own MistralTokenizer's ids).
func TestExactLiveMistralSentencePiece(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.model.v7"), testutil.ZstdFile(t, filepath.Join(testutil.RepoRoot(t), "internal", "tokenizer", "testdata", "ranks", "sp_v7.model.zst")), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := modelsrc.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	exactLiveRenderer(t, src, serverprofile.RendererMistral, false, 13, endpoint.Chat)
}
