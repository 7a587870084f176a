package endpoint

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Kind{
		"": Chat, "chat": Chat, " Completions ": Completions, "RESPONSES": Responses,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"chat_completions", "responses/v1", "completion"} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "chat, completions, responses") {
			t.Errorf("Parse(%q) = %v; want an error listing the names", bad, err)
		}
	}
}

// The paths are OpenAI's (and vLLM's) routes.
func TestPaths(t *testing.T) {
	for k, want := range map[Kind]string{
		"": "/v1/chat/completions", Chat: "/v1/chat/completions",
		Completions: "/v1/completions", Responses: "/v1/responses",
	} {
		if got := k.Path(); got != want {
			t.Errorf("%q.Path() = %s, want %s", k, got, want)
		}
	}
}

// vLLM's tokenization per endpoint (server-preprocessing.md §1.8, §2, §3).
func TestServerRules(t *testing.T) {
	type rule struct{ templated, special, multi bool }
	for k, want := range map[Kind]rule{
		Chat:        {true, false, true},
		Completions: {false, true, false},
		Responses:   {true, true, true},
	} {
		if got := (rule{k.Templated(), k.AddsSpecialTokens(), k.MultiTurn()}); got != want {
			t.Errorf("%s: %+v, want %+v", k, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	var v struct {
		E Kind `json:"endpoint,omitempty"`
	}
	if err := json.Unmarshal([]byte(`{}`), &v); err != nil || v.E.OrChat() != Chat {
		t.Fatalf("absent field: %q, %v; want chat", v.E, err)
	}
	if err := json.Unmarshal([]byte(`{"endpoint":"responses"}`), &v); err != nil || v.E != Responses {
		t.Fatalf("responses: %q, %v", v.E, err)
	}
	if err := json.Unmarshal([]byte(`{"endpoint":"embeddings"}`), &v); err == nil {
		t.Fatal("embeddings accepted")
	}
	v.E = ""
	if b, _ := json.Marshal(v); string(b) != `{}` {
		t.Fatalf("empty kind marshals as %s", b)
	}
}
