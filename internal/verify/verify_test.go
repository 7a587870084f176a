package verify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

func startServer(t *testing.T, model string) *testserver.Server {
	t.Helper()
	m, err := cli.LoadModel(model, "", "", true)
	if err != nil {
		t.Fatal(err)
	}
	return testserver.StartTest(t, testserver.Config{Model: m.Source})
}

func TestAgreesWithAServerOfTheSameModel(t *testing.T) {
	srv := startServer(t, "")
	m, err := cli.LoadModel("", "", "", true)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := m.Source.Tokenizer()
	res, err := Run(context.Background(), Options{URL: srv.URL(), Model: "qwen3", Template: m.Template, Counter: tok, Timeout: 5 * time.Second})
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
	if r := res.Requests[1]; r.Ours != 39 || r.Messages != 3 {
		t.Errorf("second request %+v, want 39 tokens for 3 messages", r)
	}
}

func TestFindsAServerWithAnotherModel(t *testing.T) {
	// The server runs Llama 3; we count with the embedded Qwen3.
	srv := startServer(t, filepath.Join(testutil.SharedDir(t), "models", "llama3"))
	m, err := cli.LoadModel("", "", "", true)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := m.Source.Tokenizer()
	res, err := Run(context.Background(), Options{URL: srv.URL(), Model: "x", Template: m.Template, Counter: tok, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Agree {
		t.Errorf("Qwen3 counts agreed with a Llama 3 server: %+v", res.Requests)
	}
}

func TestUnreachableServerIsOneClearError(t *testing.T) {
	_, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1", Model: "x", Counter: wordCounter{}, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "--verify-url http://127.0.0.1:1") {
		t.Errorf("error %v", err)
	}
}

type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }
