package metrics

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

func sample(time string, prompt, requests, hits float64) records.Metrics {
	return records.Metrics{Kind: records.KindMetrics, URL: "http://h/metrics", Time: time, Samples: []records.MetricSample{
		{Name: "vllm:prompt_tokens_total", Labels: map[string]string{"engine": "0"}, Value: prompt},
		{Name: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "stop"}, Value: requests - 1},
		{Name: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "length"}, Value: 1},
		{Name: "vllm:prefix_cache_hits_total", Value: hits},
	}}
}

func TestJudge(t *testing.T) {
	before := sample("2026-01-01T00:00:00Z", 500, 3, 32)
	after := sample("2026-01-01T00:00:09.5Z", 1700, 7, 96)
	failed := records.Metrics{URL: "http://h/metrics", Time: "2026-01-01T00:00:05Z", Error: "connection refused"}
	// 4 requests, 1200 prompt tokens, 64 expected cached: every counter agrees.
	c := Client{Sent: 4, Succeeded: 4, PromptTokens: 1200, ExpectedCached: 64, ExpectedCachedRequests: 4}
	w := Judge("http://h/metrics", []records.Metrics{before, failed, after}, c)
	if w.Verdict != VerdictAgrees || w.Server != "vllm" || w.Scrapes != 3 || w.Errors != 1 || w.Foreign != 0 ||
		w.PromptTokens.Server != 1200 || w.Requests.Server != 4 || w.PrefixCacheHits.Server != 64 || w.GenerationTokens != nil {
		t.Errorf("agreeing run: %+v", w)
	}
	if !strings.Contains(w.Line(), "agrees: requests 4, prompt tokens 1200, prefix-cache hits 64") {
		t.Errorf("line: %s", w.Line())
	}
	// The server counted 1200 more prompt tokens than the usage says.
	c.PromptTokens, c.ExpectedCachedRequests = 600, 2
	w = Judge("http://h/metrics", []records.Metrics{before, after}, c)
	if w.Verdict != VerdictMismatch || w.PromptTokens.Difference != 600 || w.PromptTokens.Agrees {
		t.Errorf("mismatch: %+v", w)
	}
	if want := "vllm prompt-token counter rose by 1200, Σ usage.prompt_tokens is 600: server +600"; !strings.Contains(w.Line(), want) {
		t.Errorf("line %q lacks %q", w.Line(), want)
	}
	// Two requests sent, four finished: two were someone else's.
	c = Client{Sent: 2, Succeeded: 2, PromptTokens: 1200}
	w = Judge("http://h/metrics", []records.Metrics{before, after}, c)
	if w.Verdict != VerdictForeign || w.Foreign != 2 || !strings.Contains(w.Line(), "2 were not islkit's") {
		t.Errorf("foreign: %+v", w)
	}
	// Half the requests carry no expectation: the hits are not compared.
	c = Client{Sent: 4, Succeeded: 4, PromptTokens: 1200, ExpectedCached: 64, ExpectedCachedRequests: 2}
	w = Judge("http://h/metrics", []records.Metrics{before, after}, c)
	if w.Verdict != VerdictAgrees || w.PrefixCacheHits != nil || !strings.Contains(w.Line(), "2 of 4 requests carry expected_cached_tokens") {
		t.Errorf("partial expectations: %+v", w)
	}
	// One good scrape: nothing to compare.
	if w := Judge("u", []records.Metrics{before, failed}, c); w.Verdict != VerdictNoWindow {
		t.Errorf("one scrape: %+v", w)
	}
	// Scrapes without the counters.
	bare := records.Metrics{Time: "t", Samples: []records.MetricSample{{Name: "vllm:num_requests_running", Value: 1}}}
	if w := Judge("u", []records.Metrics{bare, bare}, c); w.Verdict != VerdictNoWindow {
		t.Errorf("no counters: %+v", w)
	}
}

func TestSortByTime(t *testing.T) {
	ms := []records.Metrics{{Time: "2026-01-01T00:00:01.5Z"}, {Time: "2026-01-01T00:00:01Z"}, {Time: "2026-01-01T00:00:01.25Z"}}
	SortByTime(ms)
	if ms[0].Time != "2026-01-01T00:00:01Z" || ms[1].Time != "2026-01-01T00:00:01.25Z" || ms[2].Time != "2026-01-01T00:00:01.5Z" {
		t.Errorf("%v", ms)
	}
}
