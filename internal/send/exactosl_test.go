package send

import (
	stdjson "encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
)

func oslConv(server string, maxTokens int) *records.Conversation {
	return &records.Conversation{Kind: records.KindConversation, SchemaVersion: records.SchemaVersion,
		ID: "c0", BenchmarkID: "b", Model: "m", Server: server,
		Turns: []records.Turn{{TargetISL: 10, Text: "hello", MaxTokens: maxTokens}}}
}

// TestExactOSLBodies: --exact-osl writes each server's own parameters for
// exactly max_tokens output tokens (the names cited in
// serverprofile.ExactOutput, written out here by hand), nothing for a
// server that cannot be told, and the record says which.
func TestExactOSLBodies(t *testing.T) {
	for _, tc := range []struct {
		server string
		want   map[string]any // the members besides model, messages, max_tokens, stream
		mode   string
	}{
		{"vllm", map[string]any{"ignore_eos": true, "min_tokens": 37.0}, records.OutputExact},
		{"sglang", map[string]any{"ignore_eos": true, "min_tokens": 37.0}, records.OutputExact},
		{"trtllm", map[string]any{"ignore_eos": true, "min_tokens": 37.0}, records.OutputExact},
		{"dynamo", map[string]any{"ignore_eos": true, "min_tokens": 37.0}, records.OutputExact},
		{"llamacpp", map[string]any{"ignore_eos": true, "n_predict": 37.0}, records.OutputExact},
		{"openai", map[string]any{}, records.OutputBestEffort},
		{"aiperf", map[string]any{}, records.OutputBestEffort},
	} {
		b, err := NewBuilder(PayloadOptions{ExactOSL: true, Server: tc.server}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := oslConv("", 37)
		built, err := b.Build(c, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := stdjson.Unmarshal(built.Body, &body); err != nil {
			t.Fatalf("%s: %v: %s", tc.server, err, built.Body)
		}
		for _, k := range []string{"model", "messages", "max_tokens", "stream", "stream_options"} {
			delete(body, k)
		}
		if len(body) != len(tc.want) {
			t.Errorf("%s: body members %v, want %v", tc.server, body, tc.want)
		}
		for k, v := range tc.want {
			if body[k] != v {
				t.Errorf("%s: %s = %v, want %v", tc.server, k, body[k], v)
			}
		}
		rec := newRecord(c, 0, 0, built)
		if rec.OutputLength == nil || rec.OutputLength.Mode != tc.mode || rec.OutputLength.Server != tc.server {
			t.Errorf("%s: output_length %+v, want mode %s", tc.server, rec.OutputLength, tc.mode)
		}
	}
}

// TestExactOSLResponses: no server's Responses endpoint is known to read
// ignore_eos or min_tokens (vLLM's drops them), so a Responses body gets
// none and is recorded best effort, with a note that says why.
func TestExactOSLResponses(t *testing.T) {
	b, _ := NewBuilder(PayloadOptions{ExactOSL: true}, nil)
	c := oslConv("vllm", 12)
	c.Endpoint = endpoint.Responses
	built, err := b.Build(c, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if countKey(built.Body, "ignore_eos")+countKey(built.Body, "min_tokens") != 0 || built.Output.Mode != records.OutputBestEffort {
		t.Errorf("%s: %+v", built.Body, built.Output)
	}
	if notes := b.OutputNotes([]records.Conversation{*c}); len(notes) != 1 || !strings.Contains(notes[0], "Responses") {
		t.Errorf("notes %q", notes)
	}
}

// TestExactOSLKeepsUserValues: a member --extra-body sets is never
// overridden (the user's min_tokens stays 5), the others are still
// written, and the record and the notes say so; --exact-osl=false writes
// nothing and records best effort.
func TestExactOSLKeepsUserValues(t *testing.T) {
	b, err := NewBuilder(PayloadOptions{ExactOSL: true, ExtraBody: `{"min_tokens":5}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := oslConv("vllm", 40)
	built, err := b.Build(c, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := stdjson.Unmarshal(built.Body, &body); err != nil {
		t.Fatalf("%v: %s", err, built.Body) // a key written twice would still parse; counted below
	}
	if body["min_tokens"] != 5.0 || body["ignore_eos"] != true {
		t.Errorf("body %s: want the user's min_tokens 5 and ignore_eos true", built.Body)
	}
	if n := countKey(built.Body, "min_tokens"); n != 1 {
		t.Errorf("min_tokens written %d times in %s", n, built.Body)
	}
	ol := built.Output
	if ol == nil || ol.Mode != records.OutputUser || !slices.Equal(ol.UserSet, []string{"min_tokens"}) || !slices.Equal(ol.Params, []string{"ignore_eos"}) {
		t.Errorf("output_length %+v", ol)
	}
	if notes := b.OutputNotes([]records.Conversation{*c}); len(notes) != 1 {
		t.Errorf("notes %q, want one about the user's min_tokens", notes)
	}

	off, _ := NewBuilder(PayloadOptions{}, nil)
	built, _ = off.Build(c, 0, 0, nil)
	if countKey(built.Body, "ignore_eos")+countKey(built.Body, "min_tokens") != 0 || built.Output.Mode != records.OutputBestEffort {
		t.Errorf("--exact-osl=false: %s, %+v", built.Body, built.Output)
	}
	if notes := off.OutputNotes([]records.Conversation{*c}); notes != nil {
		t.Errorf("--exact-osl=false notes %q", notes)
	}
}

// TestExactOSLNoteOnce: a server that cannot be told is said once per run,
// however many conversations go to it.
func TestExactOSLNoteOnce(t *testing.T) {
	b, _ := NewBuilder(PayloadOptions{ExactOSL: true, Server: "openai"}, nil)
	convs := []records.Conversation{*oslConv("", 8), *oslConv("", 9)}
	if notes := b.OutputNotes(convs); len(notes) != 1 {
		t.Errorf("notes %q, want one", notes)
	}
}

func countKey(body []byte, key string) int {
	n := 0
	q := []byte(`"` + key + `":`)
	for i := 0; i+len(q) <= len(body); i++ {
		if string(body[i:i+len(q)]) == string(q) {
			n++
		}
	}
	return n
}

// TestChainBody: a chained turn keeps the instructions and the items after
// the last assistant item, and names the previous answer; every chained
// body is stored; --extra-body may not set store or previous_response_id
// then.
func TestChainBody(t *testing.T) {
	full := []byte(`{"model":"m","instructions":"S","input":[{"type":"message","role":"user","content":"a"},{"type":"message","role":"assistant","content":"b"},{"type":"message","role":"user","content":"c"}],"max_output_tokens":4}`)
	got, err := chainBody(full, "resp_1")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","instructions":"S","input":[{"type":"message","role":"user","content":"c"}],"max_output_tokens":4,"previous_response_id":"resp_1","store":true}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, _ := chainBody(full, ""); !strings.HasSuffix(string(got), `"max_output_tokens":4,"store":true}`) {
		t.Errorf("first turn: %s", got)
	}
	for _, extra := range []string{`{"store":false}`, `{"previous_response_id":"x"}`} {
		if _, err := NewBuilder(PayloadOptions{ResponsesChain: true, ExtraBody: extra}, nil); err == nil {
			t.Errorf("--extra-body %s accepted with --responses-chain", extra)
		}
	}
}
