package testserver

import (
	"fmt"
	"testing"
)

// TestRandomStop: replies stop like a real model's, at a length from 1 to
// max_tokens, "stop" below it and "length" at it, reproducibly for a seed
// and a request, whatever the order the requests come in; ignore_eos runs
// to max_tokens and min_tokens is a floor.
func TestRandomStop(t *testing.T) {
	type reply struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	// run sends 200 requests, each with a content of its own, in order or
	// in reverse order; out[i] is request i's reply either way.
	run := func(seed uint64, extra string, reverse bool) []reply {
		s := StartTest(t, Config{NoTokenize: true, RandomStop: true, Seed: seed})
		out := make([]reply, 200)
		for k := range out {
			i := k
			if reverse {
				i = len(out) - 1 - k
			}
			postJSON(t, s.URL(), fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"x %d"}],"max_tokens":20%s}`, i, extra), nil, &out[i])
		}
		return out
	}
	a, b := run(3, "", false), run(3, "", true)
	seen := map[int]bool{}
	for i, r := range a {
		n, finish := r.Usage.CompletionTokens, r.Choices[0].FinishReason
		if n < 1 || n > 20 || (n < 20) != (finish == "stop") || n == 20 && finish != "length" {
			t.Errorf("reply %d: %d tokens, finish %q", i, n, finish)
		}
		if n != b[i].Usage.CompletionTokens {
			t.Errorf("reply %d: %d tokens, %d with the same seed, sent in reverse order", i, n, b[i].Usage.CompletionTokens)
		}
		seen[n] = true
	}
	// 200 uniform draws from 20 lengths miss one with probability < 1e-7
	// (and the seed is fixed).
	if len(seen) != 20 {
		t.Errorf("%d distinct lengths in 200 replies, want all 20", len(seen))
	}
	for _, c := range []struct {
		extra string
		min   int
	}{{`,"ignore_eos":true`, 20}, {`,"min_tokens":15`, 15}} {
		for i, r := range run(3, c.extra, false)[:50] {
			if n := r.Usage.CompletionTokens; n < c.min || n > 20 {
				t.Errorf("%s reply %d: %d tokens", c.extra, i, n)
			}
		}
	}
	if fmt.Sprint(run(4, "", false)[:20]) == fmt.Sprint(a[:20]) {
		t.Error("seeds 3 and 4 give the same lengths")
	}
}
