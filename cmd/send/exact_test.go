package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// composeLive writes what `probe --apply-chat-template --cache-bust
// first_turn_prefix | compose --live` writes for the embedded model to a
// file.
func composeLive(t *testing.T) string {
	return composeLiveFor(t, endpoint.Chat, cachebust.FirstTurnPrefix,
		compose.Options{ISL: 80, OSL: 32, Conversations: 4, Turns: 4, Seed: 9, SharedSystemPromptLength: 20})
}

// TestExactEndToEnd: compose --live | send --exact against a server whose
// replies stop at random lengths gives every request exactly its
// target_isl by the server's usage, with records that validate; --exact
// with another model's tokenizer, or with conversations compose wrote
// without --live, is refused before anything is sent.
func TestExactEndToEnd(t *testing.T) {
	in := composeLive(t)
	s := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 3, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	// --exact-osl=false: the replies stop at random lengths, which is
	// what --exact must make up for.
	code, out, errs := runCLI("--exact", "--exact-osl=false", "--url", s.URL(), "--concurrency", "4", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 16 {
		t.Fatalf("%d records, want 16", len(lines))
	}
	resized := 0
	for _, l := range lines {
		testutil.ValidateSchema(t, "request.schema.json", []byte(l))
		var r struct {
			Turn        int  `json:"turn"`
			Target      int  `json:"target_isl"`
			Expected    *int `json:"expected_isl"`
			ResizedFrom *int `json:"resized_from"`
			Result      struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Result.Usage.PromptTokens != r.Target || r.Expected == nil || *r.Expected != r.Target {
			t.Errorf("turn %d: server counts %d, send %v, target %d", r.Turn, r.Result.Usage.PromptTokens, r.Expected, r.Target)
		}
		if r.ResizedFrom != nil {
			resized++
		}
	}
	if resized == 0 {
		t.Error("no request resized: random replies should have needed it")
	}

	// A reply far longer than budgeted (the request asks for 300 tokens,
	// compose budgeted 32) leaves the next turns unreachable: recorded,
	// and said on stderr.
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(long, bytes.Replace(data, []byte(`"max_tokens":32,`), []byte(`"max_tokens":300,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := testserver.StartTest(t, testserver.Config{Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	code, out, errs = runCLI("--exact", "--url", s2.URL(), long)
	if code != 0 || !strings.Contains(errs, "could not be made exact") || !strings.Contains(out, `"unreachable":{`) {
		t.Errorf("unreachable: exit %d, stderr %q", code, errs)
	}

	before := s.Requests()
	code, _, errs = runCLI("--exact", "--tokenizer", testutil.RefModel(t, "llama3"), "--url", s.URL(), in)
	if code != 2 || !strings.Contains(errs, "model mismatch") || s.Requests() != before {
		t.Errorf("another model: exit %d, %q, %d requests sent", code, errs, s.Requests()-before)
	}
	code, _, errs = runCLI("--exact", "--url", s.URL(), writeInput(t, convLine))
	if code != 2 || !strings.Contains(errs, "compose it with --live") {
		t.Errorf("conversations without --live: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI("--tokenizer", "x", "--url", s.URL(), in)
	if code != 2 || !strings.Contains(errs, "--exact only") {
		t.Errorf("--tokenizer without --exact: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI("--exact", "--dry-run", in)
	if code != 2 || !strings.Contains(errs, "live run only") {
		t.Errorf("--exact --dry-run: exit %d, %q", code, errs)
	}
}
