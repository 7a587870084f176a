package verify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// startServer serves a reference model by name ("" is the embedded
// default).
func startServer(t *testing.T, model string) *testserver.Server {
	t.Helper()
	return testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, model)})
}

// qwen3 is the embedded default model's options for our side.
func qwen3(t *testing.T, url string) Options {
	t.Helper()
	src := testmodel.Source(t, "")
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return Options{URL: url, Model: "qwen3", Template: tmpl, Counter: tok, Timeout: 5 * time.Second}
}

func TestAgreesWithAServerOfTheSameModel(t *testing.T) {
	srv := startServer(t, "")
	// A URL ending in /v1, as OpenAI clients take it, reaches the same endpoint.
	res, err := Run(context.Background(), qwen3(t, srv.URL()+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Agree || len(res.Requests) != 6 {
		t.Fatalf("result %+v, want 6 agreeing requests", res)
	}
	// Qwen3: "Hello, how are you today?" as [user] renders to 15 tokens
	// (the probe record's sample 1: bare 7, single 15, triple 39).
	if r := res.Requests[0]; r.Ours != 15 || r.Server != 15 || r.Messages != 1 {
		t.Errorf("first request %+v, want 15 on both sides", r)
	}
	if r := res.Requests[1]; r.Ours != 39 || r.Server != 39 || r.Messages != 3 {
		t.Errorf("second request %+v, want 39 tokens on both sides for 3 messages", r)
	}
}

func TestFindsAServerWithAnotherModel(t *testing.T) {
	// The server runs Llama 3; we count with the embedded Qwen3.
	srv := startServer(t, "llama3")
	res, err := Run(context.Background(), qwen3(t, srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Agree {
		t.Errorf("Qwen3 counts agreed with a Llama 3 server: %+v", res.Requests)
	}
}

func TestBareCountWithoutTemplate(t *testing.T) {
	srv := startServer(t, "")
	o := qwen3(t, srv.URL())
	o.Template, o.Counter = nil, wordCounter{}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// Sample 1 is five words; three messages of it are joined by spaces.
	if r := res.Requests[0]; r.Ours != 5 || r.Diff != r.Server-5 {
		t.Errorf("first request %+v, want ours 5", r)
	}
	if r := res.Requests[1]; r.Ours != 15 {
		t.Errorf("second request %+v, want ours 15", r)
	}
}

func TestServerErrorsAreClear(t *testing.T) {
	failing := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, ""), FaultRate: 1, Faults: []string{testserver.Fault500}})
	noUsage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"choices":[]}`))
	}))
	defer noUsage.Close()
	for url, want := range map[string]string{
		failing.URL(): "HTTP 500",
		noUsage.URL:   "no usage.prompt_tokens",
		"localhost:1": "has no scheme: add http://",
	} {
		_, err := Run(context.Background(), Options{URL: url, Model: "x", Counter: wordCounter{}, Timeout: 5 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "--verify-url") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want --verify-url and %q", url, err, want)
		}
	}
}

func TestUnreachableServerIsOneClearError(t *testing.T) {
	_, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1", Model: "x", Counter: wordCounter{}, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "--verify-url http://127.0.0.1:1") {
		t.Errorf("error %v", err)
	}
}

type wordCounter struct{}

func (wordCounter) Count(s string) int             { return len(strings.Fields(s)) }
func (wordCounter) CountBytes(b []byte) int        { return len(strings.Fields(string(b))) }
func (wordCounter) NumSpecialTokensToAdd(bool) int { return 0 }

// TestProfileNamedAndFollowed: the result names the profile our counts
// assumed. Probe's conversations have string contents only and end with a
// user turn, so every profile counts them as the (vllm) server does.
func TestProfileNamedAndFollowed(t *testing.T) {
	srv := startServer(t, "")
	for _, p := range []serverprofile.Profile{"", serverprofile.Transformers, serverprofile.AIPerf} {
		o := qwen3(t, srv.URL())
		o.Profile = p
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		want := string(p)
		if p == "" {
			want = "vllm"
		}
		if res.Profile != want || !res.Agree {
			t.Errorf("profile %q: result profile %q, agree %v", p, res.Profile, res.Agree)
		}
	}
}
