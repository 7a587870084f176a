package compose

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

func endpointProbe(t *testing.T, ep endpoint.Kind, target cachebust.Target) (*records.Probe, *Model) {
	t.Helper()
	src := testmodel.Source(t, "")
	p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: ep.Templated(), CacheBust: target, Now: pinned, Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	m, err := modelFor(p, src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

// A completions prompt has no history and no system message: multi-turn
// and system-prompt flags are refused up front with what to do instead,
// and so is an endpoint other than the probe's.
func TestEndpointRefusals(t *testing.T) {
	base := Options{ISL: 64, OSL: 8, Conversations: 1, Turns: 1, Exact: true, ISLSet: true, TurnsSet: true}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"turns", func(o *Options) { o.Turns = 3 }, "--turns must be 1 (got 3)"},
		{"turns-stddev", func(o *Options) { o.TurnsStddev = 1 }, "--turns-stddev 1"},
		{"system", func(o *Options) { o.SharedSystemPromptLength = 20 }, "no system message"},
		{"prefix-groups", func(o *Options) { o.PrefixGroups, o.PrefixLength = 2, 16 }, "--prefix-groups"},
	} {
		o := base
		o.Endpoint = endpoint.Completions
		tc.edit(&o)
		err := o.Validate()
		if !cli.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
	o := base
	o.Endpoint, o.Turns = endpoint.Responses, 3
	if err := o.Validate(); err != nil {
		t.Errorf("responses with --turns 3: %v", err)
	}
	p, m := endpointProbe(t, endpoint.Chat, cachebust.None)
	o = base
	o.Endpoint = endpoint.Responses
	if _, err := New(p, m, "", o); !cli.IsUsage(err) || !strings.Contains(err.Error(), "--endpoint responses disagrees with the probe record (chat)") {
		t.Errorf("endpoint mismatch: %v", err)
	}
	p, m = endpointProbe(t, endpoint.Completions, cachebust.None)
	if _, err := NewDataset(p, m, DatasetOptions{OSL: 8}); !cli.IsUsage(err) || !strings.Contains(err.Error(), "chat requests only") {
		t.Errorf("dataset: %v", err)
	}
	if _, err := NewTracer(p, m, "", TraceOptions{BlockSize: 16}); !cli.IsUsage(err) || !strings.Contains(err.Error(), "chat requests only") {
		t.Errorf("trace: %v", err)
	}
}

// A completions conversation has one bare turn, the marker on the prompt
// whatever the target (a system target falls back to it), and its count
// is the prompt's with the tokenizer's special tokens.
func TestCompletionsConversation(t *testing.T) {
	for _, target := range cachebust.Targets() {
		p, m := endpointProbe(t, endpoint.Completions, target)
		c, err := New(p, m, "", Options{ISL: 50, OSL: 8, Conversations: 1, Turns: 1, Exact: true, ISLSet: true, Workers: 1, Endpoint: endpoint.Completions})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := c.Conversation(0)
		if err != nil {
			t.Fatal(err)
		}
		want := cachebust.Landing{Slot: cachebust.FirstUserTurn, Prefix: target.IsPrefix()}
		if target == cachebust.None {
			want = cachebust.Landing{}
		}
		if conv.Endpoint != endpoint.Completions || len(conv.Turns) != 1 || conv.SystemPrompt != nil || conv.Landing != want {
			t.Errorf("%s: endpoint %q, %d turns, landing %s", target, conv.Endpoint, len(conv.Turns), conv.Landing)
		}
		marker := cachebust.Marker(target, conv.BenchmarkID, 0, conv.Index, conv.ID)
		prompt := cachebust.InjectString(target, marker, conv.Turns[0].Text)
		// The embedded Qwen3 adds no special tokens (ByteLevel
		// post-processor): the count is the marked prompt's own.
		if n := m.Tokenizer.Count(prompt); n != 50 || conv.Turns[0].WireISL == nil || *conv.Turns[0].WireISL != 50 {
			t.Errorf("%s: prompt counts %d, wire_isl %v; want 50", target, n, conv.Turns[0].WireISL)
		}
	}
}

// A completions probe record of a BOS-adding tokenizer has a fixed cost
// without a template (its special tokens): compose reads it, and refuses
// one whose cost is not the tokenizer's special tokens. (It was refused
// as "non-zero although the chat template was not applied".)
func TestReadCompletionsProbe(t *testing.T) {
	rec, err := probe.Run(probe.Options{Source: testmodel.Source(t, "mistral7b"), CacheBust: cachebust.None, Endpoint: endpoint.Completions})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Overhead.Fixed != 1 {
		t.Fatalf("mistral7b completions fixed %d, want its BOS", rec.Overhead.Fixed)
	}
	line, _ := json.Marshal(rec)
	if _, err := ReadProbe(bytes.NewReader(line), "p.json"); err != nil {
		t.Errorf("completions probe of mistral7b refused: %v", err)
	}
	for name, edit := range map[string]func(*records.Probe){
		"fixed":   func(p *records.Probe) { p.Overhead.Fixed = 3 },
		"wrap":    func(p *records.Probe) { p.Overhead.Wrap = 1 },
		"applied": func(p *records.Probe) { p.ChatTemplate.Applied = true },
	} {
		bad := *rec
		edit(&bad)
		line, _ := json.Marshal(&bad)
		if _, err := ReadProbe(bytes.NewReader(line), "p.json"); err == nil || !strings.Contains(err.Error(), "p.json:1") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
