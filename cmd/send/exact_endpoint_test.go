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
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// composeLiveFor writes what `probe --endpoint ep --cache-bust target |
// compose --live` writes for the embedded model to a file.
func composeLiveFor(t *testing.T, ep endpoint.Kind, target cachebust.Target, o compose.Options) string {
	t.Helper()
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	src := testmodel.Source(t, "")
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: ep.Templated(), CacheBust: target, Now: now, Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromSource(src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m.Now = now
	o.Endpoint, o.Exact, o.Live, o.Model, o.Workers = ep, true, true, "m", 1
	o.ISLSet, o.OSLSet, o.TurnsSet = true, true, true
	if o.BenchmarkID == "" {
		o.BenchmarkID = testutil.SeedBenchmarkID(o.Seed) // the same markers, and replies, every run
	}
	c, err := compose.New(p, m, "", o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := c.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	path := filepath.Join(t.TempDir(), "convs.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExactEndpointsCLI: send --exact --endpoint responses (3-turn
// conversations with instructions) and --endpoint completions (one
// prompt each, recycled), with --warmup 2 and --ramp-up, against a server
// whose replies stop at random lengths: exit 0, every record's usage is
// its target_isl, the first two are warmup. --exact with an endpoint
// other than the conversations' is refused before anything is sent.
func TestExactEndpointsCLI(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 4, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	for _, tc := range []struct {
		ep   endpoint.Kind
		o    compose.Options
		args []string
		n    int
	}{
		{endpoint.Responses, compose.Options{ISL: 60, OSL: 24, Conversations: 3, Turns: 3, SharedSystemPromptLength: 20, Seed: 2}, nil, 9},
		{endpoint.Completions, compose.Options{ISL: 60, OSL: 8, Conversations: 3, Turns: 1, Seed: 2}, []string{"--recycle", "--requests", "6"}, 8},
	} {
		in := composeLiveFor(t, tc.ep, cachebust.FirstTurnSuffix, tc.o)
		args := append([]string{"--exact", "--endpoint", string(tc.ep), "--url", s.URL(), "--concurrency", "2", "--warmup", "2", "--ramp-up", "20ms"}, tc.args...)
		code, out, errs := runCLI(append(args, in)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.ep, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != tc.n {
			t.Fatalf("%s: %d records, want %d", tc.ep, len(lines), tc.n)
		}
		warm := 0
		for _, l := range lines {
			testutil.ValidateSchema(t, "request.schema.json", []byte(l))
			var r struct {
				Endpoint string `json:"endpoint"`
				Turn     int    `json:"turn"`
				Target   int    `json:"target_isl"`
				Warmup   bool   `json:"warmup"`
				Result   struct {
					Usage struct {
						PromptTokens int `json:"prompt_tokens"`
					} `json:"usage"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Endpoint != string(tc.ep) || r.Result.Usage.PromptTokens != r.Target {
				t.Errorf("%s turn %d: endpoint %q, server counts %d, target %d", tc.ep, r.Turn, r.Endpoint, r.Result.Usage.PromptTokens, r.Target)
			}
			if r.Warmup {
				warm++
			}
		}
		if warm != 2 {
			t.Errorf("%s: %d warmup records, want 2", tc.ep, warm)
		}
		before := s.Requests()
		code, out, errs = runCLI("--exact", "--endpoint", "chat", "--url", s.URL(), in)
		if code != 2 || out != "" || !strings.Contains(errs, "not chat") || s.Requests() != before {
			t.Errorf("%s conversations with --endpoint chat: exit %d, stderr %q, %d sent", tc.ep, code, errs, s.Requests()-before)
		}
	}
}
