package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- serve(ctx, []string{"-addr", "127.0.0.1:0", "-no-tokenize"}, &out, &errb, func(url string) {
			resp, err := http.Post(url+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
			if err != nil {
				t.Error(err)
			} else {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("status %d", resp.StatusCode)
				}
			}
			cancel()
		})
	}()
	if code := <-done; code != 0 || !strings.Contains(errb.String(), "1 requests") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := serve(context.Background(), []string{"-bogus"}, &out, &errb, nil); code != 2 {
		t.Errorf("-bogus: exit %d", code)
	}
	if code := serve(context.Background(), []string{"-faults", "fire", "-no-tokenize"}, &out, &errb, nil); code != 2 || !strings.Contains(errb.String(), "unknown fault") {
		t.Errorf("-faults fire: exit %d, %q", code, errb.String())
	}
}

// TestBadValuesAreUsageErrors: values the server cannot honour are
// refused with exit 2 (issue 11 item 16).
func TestBadValuesAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-fault-rate", "2"}, {"-fault-rate", "-0.1"}, {"-fault-rate", "NaN"},
		{"-tokens-per-second", "-5"}, {"-ttft", "-1s"}, {"-faults", "fire"},
	} {
		var out, errb bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		code := serve(ctx, append(args, "-no-tokenize", "-addr", "127.0.0.1:0"), &out, &errb, func(string) {
			t.Errorf("%v: the server started", args)
			cancel()
		})
		cancel()
		if code != 2 || !strings.Contains(errb.String(), args[0]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", args, code, errb.String(), args[0])
		}
	}
}

// TestTokenizerMode: -tokenizer-mode is vLLM's: a value it does not have,
// or mistral on a model without Mistral files, is a usage error naming
// the flag.
func TestTokenizerMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tokenizer-mode", "slow"}, "--tokenizer-mode"},
		{[]string{"-tokenizer-mode", "mistral", "-tokenizer", t.TempDir()}, "no tekken.json"},
		{[]string{"-tokenizer-mode", "mistral"}, "embedded"},
	} {
		var out, errb bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		code := serve(ctx, append(c.args, "-addr", "127.0.0.1:0"), &out, &errb, func(string) {
			t.Errorf("%v: the server started", c.args)
			cancel()
		})
		cancel()
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errb.String(), c.want)
		}
	}
}
