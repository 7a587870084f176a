package cachebust

import (
	"errors"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/request"
)

// The markers of AIPerf's tests/unit/workers/test_worker_cache_bust_injection.py.
const (
	pre = "[rid:abc123def456]\n\n"
	suf = "\n\n[rid:abc123def456]"
)

// msgs decodes JSON messages (role, name, content: a string, null or
// text parts) into the typed messages send writes.
func msgs(t *testing.T, js string) []request.Message {
	t.Helper()
	var raw []struct {
		Role    string          `json:"role"`
		Name    string          `json:"name"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatal(err)
	}
	out := make([]request.Message, len(raw))
	for i, r := range raw {
		m := request.Message{Role: r.Role, Name: r.Name}
		var parts []struct {
			Type, Text string
		}
		switch {
		case string(r.Content) == "null":
			m.Null = true
		case json.Unmarshal(r.Content, &m.Content) == nil:
		case json.Unmarshal(r.Content, &parts) == nil:
			m.Parts = []request.Part{}
			for _, p := range parts {
				if p.Type != "text" {
					t.Fatalf("part type %q", p.Type)
				}
				m.Parts = append(m.Parts, request.Part{Text: p.Text})
			}
		default:
			t.Fatalf("content %s", r.Content)
		}
		out[i] = m
	}
	return out
}

func TestInjectString(t *testing.T) {
	if got := InjectString(SystemPrefix, pre, "You are helpful."); got != "[rid:abc123def456]\n\nYou are helpful." {
		t.Errorf("prefix = %q", got)
	}
	if got := InjectString(SystemSuffix, suf, "You are helpful."); got != "You are helpful.\n\n[rid:abc123def456]" {
		t.Errorf("suffix = %q", got)
	}
	if got := InjectString(SystemPrefix, pre, "[rid:abc123def456]\n\nYou are helpful."); got != "[rid:abc123def456]\n\nYou are helpful." {
		t.Errorf("not idempotent: %q", got)
	}
	if got := InjectString(None, pre, "x"); got != "x" {
		t.Errorf("none = %q", got)
	}
}

func TestInjectWorkerCases(t *testing.T) {
	tests := []struct {
		name   string
		target Target
		marker string
		in     string
		want   string
		slot   Slot
		index  int
	}{
		{"raw system prefix", SystemPrefix, pre,
			`[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]`,
			`[{"role":"system","content":"[rid:abc123def456]\n\nBe brief."},{"role":"user","content":"Hi"}]`,
			SharedSystemPrompt, 0},
		{"raw system suffix", SystemSuffix, suf,
			`[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]`,
			`[{"role":"system","content":"Be brief.\n\n[rid:abc123def456]"},{"role":"user","content":"Hi"}]`,
			SharedSystemPrompt, 0},
		{"raw system prefix idempotent", SystemPrefix, pre,
			`[{"role":"system","content":"[rid:abc123def456]\n\nBe brief."},{"role":"user","content":"Hi"}]`,
			`[{"role":"system","content":"[rid:abc123def456]\n\nBe brief."},{"role":"user","content":"Hi"}]`,
			SharedSystemPrompt, 0},
		{"raw system multimodal prefix", SystemPrefix, pre,
			`[{"role":"system","content":[{"type":"text","text":"A"},{"type":"text","text":"Be brief."}]},{"role":"user","content":"Hi"}]`,
			`[{"role":"system","content":[{"type":"text","text":"[rid:abc123def456]"},{"type":"text","text":"A"},{"type":"text","text":"Be brief."}]},{"role":"user","content":"Hi"}]`,
			SharedSystemPrompt, 0},
		{"raw system multimodal prefix idempotent", SystemPrefix, pre,
			`[{"role":"system","content":[{"type":"text","text":"[rid:abc123def456]"},{"type":"text","text":"Be brief."}]}]`,
			`[{"role":"system","content":[{"type":"text","text":"[rid:abc123def456]"},{"type":"text","text":"Be brief."}]}]`,
			SharedSystemPrompt, 0},
		{"raw system multimodal suffix", SystemSuffix, suf,
			`[{"role":"system","content":[{"type":"text","text":"Be brief."}]}]`,
			`[{"role":"system","content":[{"type":"text","text":"Be brief."},{"type":"text","text":"[rid:abc123def456]"}]}]`,
			SharedSystemPrompt, 0},
		{"first user turn skips system prefix", FirstTurnPrefix, pre,
			`[{"role":"system","content":"S"},{"role":"user","content":"Q1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			`[{"role":"system","content":"S"},{"role":"user","content":"[rid:abc123def456]\n\nQ1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			FirstUserTurn, 1},
		{"first user turn suffix", FirstTurnSuffix, suf,
			`[{"role":"user","content":"Q1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			`[{"role":"user","content":"Q1\n\n[rid:abc123def456]"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			FirstUserTurn, 0},
		// Under accumulated history the first user message was marked on
		// turn 0; turn 1 must not stack a second marker.
		{"first user turn idempotent on later turn", FirstTurnSuffix, suf,
			`[{"role":"user","content":"Q1\n\n[rid:abc123def456]"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			`[{"role":"user","content":"Q1\n\n[rid:abc123def456]"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			FirstUserTurn, 0},
		{"system target falls back to first user prefix", SystemPrefix, pre,
			`[{"role":"user","content":"Q1"}]`,
			`[{"role":"user","content":"[rid:abc123def456]\n\nQ1"}]`,
			FirstUserTurn, 0},
		{"system target falls back to first user suffix at turn 1", SystemSuffix, suf,
			`[{"role":"user","content":"Q1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			`[{"role":"user","content":"Q1\n\n[rid:abc123def456]"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]`,
			FirstUserTurn, 0},
		{"first turn target ignores system message", FirstTurnPrefix, pre,
			`[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]`,
			`[{"role":"system","content":"S"},{"role":"user","content":"[rid:abc123def456]\n\nQ1"}]`,
			FirstUserTurn, 1},
		{"first user multimodal suffix", FirstTurnSuffix, suf,
			`[{"role":"user","content":[{"type":"text","text":"Look"},{"type":"text","text":"More"}]}]`,
			`[{"role":"user","content":[{"type":"text","text":"Look"},{"type":"text","text":"More"},{"type":"text","text":"[rid:abc123def456]"}]}]`,
			FirstUserTurn, 0},
		{"none passthrough", None, pre,
			`[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]`,
			`[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]`,
			NoSlot, -1},
		{"other fields kept", FirstTurnPrefix, pre,
			`[{"role":"user","name":"bob","content":"Q1"}]`,
			`[{"role":"user","name":"bob","content":"[rid:abc123def456]\n\nQ1"}]`,
			FirstUserTurn, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := msgs(t, tt.in)
			orig := msgs(t, tt.in)
			res := Inject(tt.target, tt.marker, in)
			if res.Dropped != nil {
				t.Fatalf("dropped: %v", res.Dropped)
			}
			if !reflect.DeepEqual(res.Messages, msgs(t, tt.want)) {
				got, _ := json.Marshal(res.Messages)
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if res.Landing.Slot != tt.slot || res.Index != tt.index {
				t.Errorf("landing %v index %d, want %v %d", res.Landing, res.Index, tt.slot, tt.index)
			}
			if res.Changed != (tt.in != tt.want) {
				t.Errorf("Changed = %v", res.Changed)
			}
			if !reflect.DeepEqual(in, orig) {
				t.Error("caller's messages were modified")
			}
			// InjectOwned: the same result, in the caller's own slice.
			owned := msgs(t, tt.in)
			ores := InjectOwned(tt.target, tt.marker, owned)
			if !reflect.DeepEqual(ores.Messages, res.Messages) || ores.Landing != res.Landing || ores.Index != res.Index ||
				ores.Changed != res.Changed || !reflect.DeepEqual(owned, res.Messages) {
				t.Errorf("InjectOwned: %+v, Inject %+v; messages after %v", ores, res, owned)
			}
		})
	}
}

func TestInjectDropped(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target Target
		in     string
		want   string
	}{
		{"null content", FirstTurnPrefix, `[{"role":"user","content":null}]`,
			"cache-bust marker dropped: cannot inject into messages[0].content of type null"},
		{"null system content", SystemPrefix, `[{"role":"system","content":null},{"role":"user","content":"Q"}]`,
			"cache-bust marker dropped: cannot inject into messages[0].content of type null"},
		{"no user message", FirstTurnPrefix, `[{"role":"assistant","content":"A"}]`,
			"cache-bust marker dropped: target first_turn_prefix found no user message to carry it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := Inject(tt.target, pre, msgs(t, tt.in))
			if !errors.Is(res.Dropped, ErrDropped) || res.Dropped.Error() != tt.want {
				t.Fatalf("Dropped = %v, want %q", res.Dropped, tt.want)
			}
			if res.Changed || res.Index != -1 || !reflect.DeepEqual(res.Messages, msgs(t, tt.in)) {
				t.Errorf("dropped result changed messages: %+v", res)
			}
		})
	}
}

func TestInjectParts(t *testing.T) {
	in := []request.Message{{Role: "user", Parts: []request.Part{{Text: "Q"}}}}
	res := Inject(FirstTurnPrefix, pre, in)
	want := []request.Part{{Text: "[rid:abc123def456]"}, {Text: "Q"}}
	if !reflect.DeepEqual(res.Messages[0].Parts, want) {
		t.Fatalf("content = %v", res.Messages[0].Parts)
	}
	if len(in[0].Parts) != 1 {
		t.Fatal("caller's parts modified")
	}
	if again := Inject(FirstTurnPrefix, pre, res.Messages); again.Changed {
		t.Fatal("not idempotent")
	}
}

// TestRouteAgreesWithInjector walks the 9 routing cells (4 targets × with
// or without a system prompt, plus none) and checks that the message the
// injector marks is the one Route predicts, at the predicted end, and that
// both agree with the table in the reference (§2.1, §4.1).
func TestRouteAgreesWithInjector(t *testing.T) {
	type cell struct {
		target    Target
		hasSystem bool
		want      Landing
	}
	cells := []cell{
		{None, false, Landing{}},
		{SystemPrefix, true, Landing{SharedSystemPrompt, true}},
		{SystemSuffix, true, Landing{SharedSystemPrompt, false}},
		{SystemPrefix, false, Landing{FirstUserTurn, true}},
		{SystemSuffix, false, Landing{FirstUserTurn, false}},
		{FirstTurnPrefix, true, Landing{FirstUserTurn, true}},
		{FirstTurnSuffix, true, Landing{FirstUserTurn, false}},
		{FirstTurnPrefix, false, Landing{FirstUserTurn, true}},
		{FirstTurnSuffix, false, Landing{FirstUserTurn, false}},
	}
	for _, c := range cells {
		if got := Route(c.target, c.hasSystem); got != c.want {
			t.Errorf("Route(%s, %v) = %v, want %v", c.target, c.hasSystem, got, c.want)
		}
		for _, listContent := range []bool{false, true} {
			in := conversation(c.hasSystem, listContent)
			marker := Marker(c.target, "bench", 1, 2, "trace")
			res := Inject(c.target, marker, in)
			if res.Dropped != nil {
				t.Fatalf("%s/%v: dropped %v", c.target, c.hasSystem, res.Dropped)
			}
			slot, prefix := whereMarked(t, in, res.Messages, marker)
			if got := (Landing{slot, prefix}); got != c.want {
				t.Errorf("%s system=%v list=%v: injector marked %v, Route says %v",
					c.target, c.hasSystem, listContent, got, c.want)
			}
		}
	}
}

// conversation is a 2-turn history as send puts it on the wire: system
// prompt first when there is one.
func conversation(hasSystem, list bool) []request.Message {
	msg := func(role, s string) request.Message {
		if list {
			return request.Message{Role: role, Parts: []request.Part{{Text: s}}}
		}
		return request.Message{Role: role, Content: s}
	}
	var m []request.Message
	if hasSystem {
		m = append(m, msg("system", "S"))
	}
	return append(m, msg("user", "U1"), msg("assistant", "A1"), msg("user", "U2"))
}

// whereMarked classifies the one message that differs between before and
// after, independently of RouteMessages.
func whereMarked(t *testing.T, before, after []request.Message, marker string) (Slot, bool) {
	t.Helper()
	changed := -1
	for i := range before {
		if !reflect.DeepEqual(before[i], after[i]) {
			if changed >= 0 {
				t.Fatalf("more than one message changed")
			}
			changed = i
		}
	}
	if changed < 0 {
		return NoSlot, false
	}
	var slot Slot
	switch {
	case before[changed].Role == "system" && changed == 0:
		slot = SharedSystemPrompt
	case before[changed].Role == "user" && firstUser(before) == changed:
		slot = FirstUserTurn
	default:
		t.Fatalf("marker landed on message %d (%v)", changed, before[changed].Role)
	}
	if c := after[changed]; c.Parts != nil {
		return slot, c.Parts[0].Text == "[rid:"+Digest("bench", 1, 2, "trace")+"]"
	}
	return slot, after[changed].Content[:len(marker)] == marker
}

func firstUser(m []request.Message) int {
	for i := range m {
		if m[i].Role == "user" {
			return i
		}
	}
	return -1
}
