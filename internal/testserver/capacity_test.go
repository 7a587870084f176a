package testserver

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// With MaxConcurrency 2, a third request waits until one of the two
// served ends (here: its client gives up on a stalled reply); no timing
// is asserted, only the counts the server reaches.
func TestMaxConcurrencyQueues(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true, MaxConcurrency: 2, Metrics: true})
	post := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+PathChat,
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
		req.Header.Set(FaultHeader, FaultStall)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	waitFor := func(running, waiting int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			r, w := s.Load()
			if r == running && w == waiting {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("load %d running, %d waiting; want %d, %d", r, w, running, waiting)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var cancels []context.CancelFunc
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		go post(ctx)
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	waitFor(2, 1)
	// /metrics says the same, as vLLM's gauges: the queued request is
	// waiting, not running.
	resp, err := http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"vllm:num_requests_running{" + metricsLabels + "} 2\n", "vllm:num_requests_waiting{" + metricsLabels + "} 1\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Whichever was served: ending the first two lets the third in.
	cancels[0]()
	cancels[1]()
	waitFor(1, 0)
}

// The time to first token grows with the prompt: TTFT plus
// PrefillPerToken per prompt token (hand-computed).
func TestPrefillTime(t *testing.T) {
	s, err := New(Config{NoTokenize: true, TTFT: 5 * time.Millisecond, PrefillPerToken: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]time.Duration{0: 5 * time.Millisecond, 100: 105 * time.Millisecond, 2000: 2005 * time.Millisecond} {
		if got := s.prefill(n); got != want {
			t.Errorf("prefill(%d) = %v, want %v", n, got, want)
		}
	}
}
