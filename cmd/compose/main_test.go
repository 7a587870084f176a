package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
)

// probeLine is the embedded model's probe record, as probe writes it.
func probeLine(t *testing.T) string {
	t.Helper()
	rec, err := probe.Run(probe.Options{CacheBust: cachebust.FirstTurnSuffix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func runCLI(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	p := probeLine(t)
	code, out, errs := runCLI(p, "--isl", "50", "--conversations", "3", "--workers", "1")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"kind":"islkit.conversation"`) {
		t.Errorf("compose: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	// A stddev needs its mean given on the command line, though --osl has
	// a default: kong's parse path tells them apart.
	if code, out, errs := runCLI(p, "--isl", "50", "--osl-stddev", "3"); code != 2 || out != "" || !strings.Contains(errs, "--osl") {
		t.Errorf("--osl-stddev without --osl: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(p, "--isl", "50", "--osl", "128", "--osl-stddev", "3", "--conversations", "1"); code != 0 {
		t.Errorf("--osl-stddev with --osl: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{
		{"--isl", "0"},
		{"--bogus"},
		{}, // --isl is required
		{"--isl", "50", "--workers", "0"},
		{"--isl", "50", "--cache-bust", "sideways"},
	} {
		if code, out, errs := runCLI(p, args...); code != 2 || out != "" || !strings.HasPrefix(errs, "compose: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	if code, out, _ := runCLI("", "--help"); code != 0 || !strings.Contains(out, "Usage: compose") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	if code, _, errs := runCLI("", "--isl", "50"); code != 1 || !strings.Contains(errs, "no probe record") {
		t.Errorf("no probe: exit %d, %q", code, errs)
	}
}

func TestTrace(t *testing.T) {
	p := probeLine(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.jsonl", `{"timestamp": 0, "input_length": 200, "output_length": 7, "hash_ids": [1, 2]}
{"timestamp": 5, "input_length": 300, "output_length": 9, "hash_ids": [1, 2, 3]}
{"timestamp": 6, "input_length": 300, "output_length": 9, "hash_ids": [1]}
`)
	code, out, errs := runCLI(p, "--trace", good, "--block-size", "128")
	if code != 0 || strings.Count(out, "\n") != 2 || errs != "compose: "+good+":3: input_length 300 needs 3 blocks of 128 tokens but hash_ids has 1: skipped (is --block-size right?)\ncompose: 1 of 3 trace rows skipped\n" {
		t.Errorf("exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	if !strings.Contains(out, `"trace":{"line":2,"timestamp_ms":5,"hash_ids":[1,2,3],"block_size":128,"full_blocks":2}`) ||
		!strings.Contains(out, `"target_isl":300`) || !strings.Contains(out, `"max_tokens":9`) {
		t.Errorf("output %s", out)
	}
	bad := write("bad.jsonl", `{"timestamp": 0, "input_length": 200, "output_length": 7, "hash_ids": [1, 2]}
{"timestamp": 5, "input_length": 300, "output_length": 9, "hash_ids": "1,2,3"}
`)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--trace", bad}, 1, "compose: " + bad + `:2: field "hash_ids"`},
		{[]string{"--trace", good, "--isl", "100"}, 2, "compose: --isl applies without --trace only"},
		{[]string{"--trace", good, "--conversations", "3"}, 2, "compose: --conversations applies without --trace only"},
		{[]string{"--trace", good, "--block-size", "0"}, 2, "compose: --block-size must be at least 1"},
		{[]string{"--trace", good, "--trace-format", "csv"}, 2, "compose: "},
	} {
		code, out, errs := runCLI(p, tt.args...)
		if code != tt.code || out != "" || !strings.HasPrefix(errs, tt.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want %d, %q", tt.args, code, len(out), errs, tt.code, tt.want)
		}
	}
	prefix, err := probe.Run(probe.Options{CacheBust: cachebust.FirstTurnPrefix})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(prefix)
	if code, out, errs := runCLI(string(b)+"\n", "--trace", good); code != 2 || out != "" || !strings.Contains(errs, "before the blocks the trace says are shared") {
		t.Errorf("prefix target: exit %d, stderr %q", code, errs)
	}
}

func TestDataset(t *testing.T) {
	p := probeLine(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "d.jsonl")
	os.WriteFile(good, []byte(`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"}, {"role": "user", "content": "bye"}]}
{"messages": [{"role": "assistant", "content": "no question"}]}
`), 0o644)
	code, out, errs := runCLI(p, "--dataset", good, "--osl", "33")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, good+":2: message 0 (assistant) where a user turn belongs: skipped") ||
		!strings.Contains(errs, "1 of 2 openai conversations skipped") {
		t.Errorf("exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	if !strings.Contains(out, `"text":"bye","bare_tokens":1,"max_tokens":33`) || !strings.Contains(out, `"assistant":"hello there"`) {
		t.Errorf("output %s", out)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"messages": [{"role": "user", "content": 7}]}`), 0o644)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dataset", bad}, 1, "compose: " + bad + `:1: field "messages.0.content"`},
		{[]string{"--dataset", good, "--osl-stddev", "3"}, 2, "compose: --osl-stddev applies without --dataset only"},
		{[]string{"--dataset", good, "--isl-stddev", "3"}, 2, "compose: --isl-stddev needs --isl"},
		{[]string{"--dataset", good, "--isl", "0"}, 2, "compose: --isl must be at least 1"},
		{[]string{"--dataset", good, "--turns", "2"}, 2, "compose: --turns applies without --dataset only"},
		{[]string{"--dataset", good, "--trace", good}, 2, "compose: --trace and --dataset"},
		{[]string{"--dataset", good, "--dataset-format", "csv"}, 2, "compose: "},
	} {
		code, out, errs := runCLI(p, tt.args...)
		if code != tt.code || out != "" || !strings.HasPrefix(errs, tt.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want %d, %q", tt.args, code, len(out), errs, tt.code, tt.want)
		}
	}
}

// TestDatasetISL: compose --dataset --isl resizes every user turn so that
// each request's wire ISL is its target_isl, compose's multi-turn
// definition (the second request: the first's target + one wrap + the
// reply + --isl), max_tokens the dataset reply's length, else --osl; a
// target below the template's own cost is marked unreachable and warned
// about.
func TestDatasetISL(t *testing.T) {
	p := probeLine(t)
	var rec records.Probe
	if err := json.Unmarshal([]byte(p), &rec); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(good, []byte(`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"}, {"role": "user", "content": "bye"}]}
`), 0o644)
	code, out, errs := runCLI(p, "--dataset", good, "--isl", "60", "--osl", "33")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var conv struct {
		Turns []struct {
			TargetISL int    `json:"target_isl"`
			WireISL   int    `json:"wire_isl"`
			Text      string `json:"text"`
			MaxTokens int    `json:"max_tokens"`
			Assistant string `json:"assistant"`
		} `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &conv); err != nil || len(conv.Turns) != 2 {
		t.Fatalf("output %s: %v", out, err)
	}
	t0, t1 := conv.Turns[0], conv.Turns[1]
	// "hello there" is two tokens of the embedded Qwen3.
	if t0.TargetISL != 60 || t0.WireISL != 60 || t1.TargetISL != 60+rec.Overhead.Wrap+2+60 || t1.WireISL != t1.TargetISL {
		t.Errorf("targets %d %d, wire %d %d (wrap %d)", t0.TargetISL, t1.TargetISL, t0.WireISL, t1.WireISL, rec.Overhead.Wrap)
	}
	if !strings.HasPrefix(t0.Text, "hi ") || !strings.HasPrefix(t1.Text, "bye ") || t0.MaxTokens != 2 || t0.Assistant != "hello there" || t1.MaxTokens != 33 {
		t.Errorf("turns %+v", conv.Turns)
	}
	code, out, errs = runCLI(p, "--dataset", good, "--isl", "2")
	if code != 0 || !strings.Contains(out, `"unreachable":{"min_isl":`) || !strings.Contains(errs, "compose: warning: 2 of 2 turn(s) are unreachable") {
		t.Errorf("--isl 2: exit %d, stderr %q, output %s", code, errs, out)
	}
}

// TestServerFlag: --server is recorded on every conversation (vllm by
// default); an unknown name is a usage error.
func TestServerFlag(t *testing.T) {
	p := probeLine(t)
	for args, want := range map[string]string{"": "vllm", "sglang": "sglang", "aiperf": "aiperf", "transformers": "transformers"} {
		a := []string{"--isl", "50", "--conversations", "2", "--workers", "1"}
		if args != "" {
			a = append(a, "--server", args)
		}
		code, out, errs := runCLI(p, a...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", a, code, errs)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var c records.Conversation
			if err := json.Unmarshal([]byte(l), &c); err != nil || c.Server != want {
				t.Errorf("%v: server %q, %v; want %s", a, c.Server, err, want)
			}
		}
	}
	if code, out, errs := runCLI(p, "--isl", "50", "--server", "tgi"); code != 2 || out != "" || !strings.Contains(errs, "--server") {
		t.Errorf("--server tgi: exit %d, stderr %q", code, errs)
	}
}
