package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestExactUsesConversationsServer: Responses conversations composed with
// --server sglang for Llama 3 (whose tokenizer adds a BOS: vLLM encodes a
// Responses prompt with special tokens, so it counts one more than SGLang)
// are sent with --exact and no --server against a server that counts as
// SGLang does: every request counts exactly its target_isl there, and its
// record says server sglang. --server vllm is refused before anything is
// sent (exit 2), saying what the conversations were composed for.
func TestExactUsesConversationsServer(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	src := testmodel.Source(t, "llama3")
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnSuffix, Now: now, Endpoint: endpoint.Responses})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromSource(src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m.Now = now
	c, err := compose.New(p, m, "", compose.Options{ISL: 60, OSL: 24, Conversations: 2, Turns: 3, Seed: 2, BenchmarkID: testutil.SeedBenchmarkID(2), Endpoint: endpoint.Responses,
		Exact: true, Live: true, Model: "m", Workers: 1, ISLSet: true, OSLSet: true, TurnsSet: true, Server: serverprofile.SGLang})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := c.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	in := filepath.Join(t.TempDir(), "convs.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testserver.StartTest(t, testserver.Config{Model: src, RandomStop: true, Seed: 5, Now: now, Profile: serverprofile.SGLang})
	code, out, errs := runCLI("--exact", "--url", s.URL(), in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d records, want 6", len(lines))
	}
	for _, l := range lines {
		var r struct {
			Server string `json:"server"`
			Turn   int    `json:"turn"`
			Target int    `json:"target_isl"`
			Result struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Server != "sglang" || r.Result.Usage.PromptTokens != r.Target {
			t.Errorf("turn %d: server %q, SGLang counts %d, target %d", r.Turn, r.Server, r.Result.Usage.PromptTokens, r.Target)
		}
	}
	before := s.Requests()
	code, out, errs = runCLI("--exact", "--server", "vllm", "--url", s.URL(), in)
	if code != 2 || out != "" || !strings.Contains(errs, "was composed for --server sglang") || s.Requests() != before {
		t.Errorf("--server vllm: exit %d, stderr %q, %d sent", code, errs, s.Requests()-before)
	}
}
