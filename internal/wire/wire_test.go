package wire

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
)

func conv(target cachebust.Target, system bool) *records.Conversation {
	c := &records.Conversation{ID: "trace_a", Index: 0, BenchmarkID: "bench", CacheBust: target,
		Turns: []records.Turn{{Text: "U0", Assistant: "A0"}, {Text: "U1", Assistant: "A1"}, {Text: "U2"}}}
	if system {
		c.SystemPrompt = &records.SystemPrompt{Text: "S"}
	}
	return c
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMarkerIsAIPerfs(t *testing.T) {
	// Reference §1.2: bench:0:0:trace_a -> eb232ceb3496.
	if got := Marker(conv(cachebust.FirstTurnPrefix, false), 0); got != "[rid:eb232ceb3496]\n\n" {
		t.Errorf("Marker = %q", got)
	}
	if got := Marker(conv(cachebust.FirstTurnPrefix, false), 1); got == "[rid:eb232ceb3496]\n\n" {
		t.Error("a recycled pass reuses the first pass's marker")
	}
	if got := Marker(conv(cachebust.None, false), 0); got != "" {
		t.Errorf("target none gives marker %q", got)
	}
}

func TestBuildHistoryAndMarker(t *testing.T) {
	c := conv(cachebust.FirstTurnSuffix, true)
	m := Marker(c, 0)
	req, err := Build(c, 2, m, []string{"real reply"})
	if err != nil {
		t.Fatal(err)
	}
	// The marker stays on the first user message of the whole history;
	// replies[0] replaces the synthetic reply of turn 0 only.
	want := `[{"content":"S","role":"system"},{"content":"U0\n\n[rid:eb232ceb3496]","role":"user"},` +
		`{"content":"real reply","role":"assistant"},{"content":"U1","role":"user"},` +
		`{"content":"A1","role":"assistant"},{"content":"U2","role":"user"}]`
	if got := marshal(t, req.Messages); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if req.Marker != m || req.MarkerAt != 1 {
		t.Errorf("marker %q at %d, want %q at 1", req.Marker, req.MarkerAt, m)
	}
	// A system target lands on the system prompt.
	c = conv(cachebust.SystemPrefix, true)
	req, _ = Build(c, 0, Marker(c, 0), nil)
	if got := req.Messages[0].Content; got != "[rid:eb232ceb3496]\n\nS" {
		t.Errorf("system prompt = %q", got)
	}
	// The conversation itself is never modified.
	if c.SystemPrompt.Text != "S" || c.Turns[0].Text != "U0" {
		t.Error("Build modified the conversation")
	}
	if _, err := Build(c, 3, "", nil); err == nil {
		t.Error("turn 3 of a 3-turn conversation accepted")
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":                    "http://h:8000/v1/chat/completions",
		"http://h:8000/":                   "http://h:8000/v1/chat/completions",
		"http://h:8000/v1":                 "http://h:8000/v1/chat/completions",
		"https://h/v1/":                    "https://h/v1/chat/completions",
		"http://h/custom/generate":         "http://h/custom/generate",
		"http://h/v1/chat/completions?x=1": "http://h/v1/chat/completions?x=1",
	} {
		if got, err := EndpointURL(in); err != nil || got != want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"h:8000", "ftp://h", "http://", "http://h:port"} {
		if got, err := EndpointURL(bad); err == nil {
			t.Errorf("EndpointURL(%q) = %q, want an error", bad, got)
		}
	}
}

// TestURLMessages: a URL without a scheme says to add one, not a URL
// parser's words; and no message repeats the password of a URL's user
// information (issue 27 item 18).
func TestURLMessages(t *testing.T) {
	for bad, want := range map[string]string{
		"127.0.0.1:8000":               `"127.0.0.1:8000" has no scheme: add http:// (http://127.0.0.1:8000) or https://`,
		"localhost:8000":               `"localhost:8000" has no scheme: add http://`,
		"u:hunter2@h:8000":             `"u:xxxxx@h:8000" has no scheme`,
		"http://u:hunter2@h:port":      `"http://u:xxxxx@h:port": invalid port`,
		"ftp://u:hunter2@h":            `"ftp://u:xxxxx@h": want http:// or https://`,
		"http://u:hunter2@h:8000/%zz":  `"http://u:xxxxx@h:8000/%zz": invalid URL escape`,
		"http://u:hunter2@[::1:8000/x": `"http://u:xxxxx@[::1:8000/x"`,
	} {
		_, err := EndpointURL(bad)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("EndpointURL(%q): %v; want %q and no password", bad, err, want)
		}
	}
	for in, want := range map[string]string{
		"http://u:hunter2@h:8000/v1": "http://u:xxxxx@h:8000/v1",
		"http://u@h:8000":            "http://u@h:8000",
		"http://h:8000":              "http://h:8000",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
