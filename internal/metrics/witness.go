// Package metrics is measure's second witness: over a run, the server's
// own Prometheus counters (send --scrape-metrics' islkit.metrics records,
// read by internal/metrics/scrape) must rise by what islkit's request
// records add up to.
package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// counterNames are the counters the witness reads on one server; "" when
// the server has none.
type counterNames struct {
	server, prompt, generation, requests, hits, queries string
}

// witnessed are the servers whose counters the witness knows. vLLM's
// request_success counts every finished request (stop, length, abort) and
// its prefix_cache_* count tokens; SGLang's num_requests counts finished
// requests and cached_tokens the prompt tokens served from its cache (no
// queries counter).
var witnessed = []counterNames{
	{"vllm", "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
		"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
	{"sglang", "sglang:prompt_tokens_total", "sglang:generation_tokens_total", "sglang:num_requests_total",
		"sglang:cached_tokens_total", ""},
}

// Counters are the server's counters in one sample, each summed over its
// label sets (engines, finish reasons, cache sources); nil when absent.
type Counters struct {
	Server                                                              string
	PromptTokens, GenerationTokens, Requests, PrefixHits, PrefixQueries *float64
}

// CountersOf reads the witnessed counters from a sample's series; Server
// is "" when it has none of them.
func CountersOf(samples []records.MetricSample) Counters {
	for _, n := range witnessed {
		c := Counters{Server: n.server}
		for _, x := range []struct {
			name string
			to   **float64
		}{{n.prompt, &c.PromptTokens}, {n.generation, &c.GenerationTokens}, {n.requests, &c.Requests}, {n.hits, &c.PrefixHits}, {n.queries, &c.PrefixQueries}} {
			if x.name == "" {
				continue
			}
			for _, s := range samples {
				if s.Name == x.name {
					if *x.to == nil {
						*x.to = new(float64)
					}
					**x.to += s.Value
				}
			}
		}
		if c.PromptTokens != nil || c.Requests != nil {
			return c
		}
	}
	return Counters{}
}

// Client is what islkit's own request records add up to over the run, for
// the witness: every live request, warmup included (the server served
// them inside the scrape window).
type Client struct {
	// Sent counts the live request records; Succeeded those that ended
	// with a whole answer.
	Sent, Succeeded int64
	// PromptTokens is Σ usage.prompt_tokens; a request that succeeded
	// without it adds measure's count of its prompt instead
	// (PromptEstimated counts those). A failed request without usage is
	// left out (PromptUnknown counts them): the server may or may not
	// have prefilled it.
	PromptTokens                   int64
	PromptEstimated, PromptUnknown int64
	// GenerationTokens is Σ usage.completion_tokens of the requests
	// that carried usage (GenerationRequests).
	GenerationTokens, GenerationRequests int64
	// ExpectedCached is Σ expected_cached_tokens (send's prediction of
	// the server's prefix cache), over ExpectedCachedRequests.
	ExpectedCached, ExpectedCachedRequests int64
}

// Check is one counter against the client's sum: Server is its rise
// over the window (last sample − first), Client what the records add
// up to, Difference Server − Client.
type Check struct {
	Server     float64 `json:"server"`
	Client     int64   `json:"client"`
	Difference float64 `json:"difference"`
	Agrees     bool    `json:"agrees"`
}

func check(first, last *float64, client int64) *Check {
	if first == nil || last == nil {
		return nil
	}
	rise := *last - *first
	d := rise - float64(client)
	return &Check{Server: rise, Client: client, Difference: d, Agrees: d == 0}
}

// Witness verdicts.
const (
	// VerdictAgrees: every counter rose by exactly what the records add
	// up to.
	VerdictAgrees = "agrees"
	// VerdictMismatch: a counter rose by another amount, and no foreign
	// request explains it.
	VerdictMismatch = "mismatch"
	// VerdictForeign: the server finished more requests than islkit sent:
	// its counters include another client's, so their differences are
	// not islkit's to explain.
	VerdictForeign = "foreign_requests"
	// VerdictNoWindow: fewer than two good scrapes, or none with counters
	// the witness knows: nothing to compare.
	VerdictNoWindow = "no_window"
)

// Witness is the second witness of one scraped server over a run: its own
// counters' rise between the first and the last good scrape against what
// islkit's records add up to.
type Witness struct {
	URL string `json:"url"`
	// Server is whose counters were read (vllm, sglang), "" when none.
	Server string `json:"server"`
	// Scrapes counts the samples, Errors the failed ones among them.
	Scrapes int `json:"scrapes"`
	Errors  int `json:"scrape_errors"`
	// From and To are the times of the first and the last good scrape.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Requests is the server's finished-request counter against the
	// requests that succeeded; Foreign the requests it finished beyond
	// every request islkit sent (0: none detected).
	Requests         *Check `json:"requests,omitempty"`
	Foreign          int64  `json:"foreign_requests"`
	PromptTokens     *Check `json:"prompt_tokens,omitempty"`
	GenerationTokens *Check `json:"generation_tokens,omitempty"`
	PrefixCacheHits  *Check `json:"prefix_cache_hits,omitempty"`
	// PromptEstimated counts requests without usage.prompt_tokens whose
	// prompt is measure's count; PromptUnknown failed requests without
	// usage, left out of the client's prompt tokens.
	PromptEstimated int64  `json:"prompt_estimated"`
	PromptUnknown   int64  `json:"prompt_unknown"`
	Verdict         string `json:"verdict"`
	// Notes say, in words, each mismatch with its size and what may
	// explain it.
	Notes []string `json:"notes"`
}

// Judge compares the server's samples (one URL's, in time order; failed
// scrapes included) with the client's sums.
func Judge(url string, samples []records.Metrics, c Client) Witness {
	w := Witness{URL: url, Scrapes: len(samples), PromptEstimated: c.PromptEstimated, PromptUnknown: c.PromptUnknown, Notes: []string{}}
	var good []int
	for i, s := range samples {
		if s.Error != "" {
			w.Errors++
			continue
		}
		good = append(good, i)
	}
	if len(good) < 2 {
		w.Verdict = VerdictNoWindow
		w.Notes = append(w.Notes, fmt.Sprintf("%d good scrape(s) of %s: the witness needs one before the first request and one after the last", len(good), url))
		return w
	}
	first, last := samples[good[0]], samples[good[len(good)-1]]
	w.From, w.To = first.Time, last.Time
	a, b := CountersOf(first.Samples), CountersOf(last.Samples)
	if a.Server == "" || a.Server != b.Server {
		w.Verdict = VerdictNoWindow
		w.Notes = append(w.Notes, "no vLLM or SGLang token or request counters in the scrapes (--metrics-series left them out, or another server)")
		return w
	}
	w.Server = a.Server
	w.Requests = check(a.Requests, b.Requests, c.Succeeded)
	if w.Requests != nil && w.Requests.Server > float64(c.Sent) {
		w.Foreign = int64(math.Round(w.Requests.Server - float64(c.Sent)))
	}
	w.PromptTokens = check(a.PromptTokens, b.PromptTokens, c.PromptTokens)
	if c.GenerationRequests > 0 {
		w.GenerationTokens = check(a.GenerationTokens, b.GenerationTokens, c.GenerationTokens)
	}
	// Every request's cached tokens must be expected for their sum to be
	// the server's: a later live turn (its history the real replies) has
	// no expectation, and hits all the same.
	if c.ExpectedCachedRequests > 0 && c.ExpectedCachedRequests == c.Sent {
		w.PrefixCacheHits = check(a.PrefixHits, b.PrefixHits, c.ExpectedCached)
	} else if c.ExpectedCachedRequests > 0 && a.PrefixHits != nil {
		w.Notes = append(w.Notes, fmt.Sprintf("prefix-cache hits not compared: %d of %d requests carry expected_cached_tokens (later live turns have none)", c.ExpectedCachedRequests, c.Sent))
	}
	w.Verdict = VerdictAgrees
	if w.Foreign > 0 {
		w.Verdict = VerdictForeign
		w.Notes = append(w.Notes, fmt.Sprintf("the server finished %s requests in the window, islkit sent %d: %d were not islkit's, and the counters below include theirs",
			num(w.Requests.Server), c.Sent, w.Foreign))
	}
	for _, x := range []struct {
		name, client string
		c            *Check
	}{
		{"finished-request counter", "requests that succeeded", w.Requests},
		{"prompt-token counter", "Σ usage.prompt_tokens", w.PromptTokens},
		{"generation-token counter", "Σ usage.completion_tokens", w.GenerationTokens},
		{"prefix-cache hits", "Σ expected_cached_tokens", w.PrefixCacheHits},
	} {
		if x.c == nil || x.c.Agrees {
			continue
		}
		if w.Verdict == VerdictAgrees {
			w.Verdict = VerdictMismatch
		}
		w.Notes = append(w.Notes, fmt.Sprintf("%s %s rose by %s, %s is %d: server %s", w.Server, x.name, num(x.c.Server), x.client, x.c.Client, signedNum(x.c.Difference)))
	}
	if c.PromptEstimated > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d request(s) without usage.prompt_tokens: measure's count of their prompt used instead", c.PromptEstimated))
	}
	if c.PromptUnknown > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d failed request(s) without usage left out of the prompt tokens (the server may have prefilled them)", c.PromptUnknown))
	}
	return w
}

// Line is the witness in one line of the text summary.
func (w Witness) Line() string {
	l := fmt.Sprintf("server metrics (%s, %d scrapes", w.URL, w.Scrapes)
	if w.Errors > 0 {
		l += fmt.Sprintf(", %d failed", w.Errors)
	}
	l += "): "
	switch w.Verdict {
	case VerdictAgrees:
		var parts []string
		for _, x := range []struct {
			name string
			c    *Check
		}{{"requests", w.Requests}, {"prompt tokens", w.PromptTokens}, {"generation tokens", w.GenerationTokens}, {"prefix-cache hits", w.PrefixCacheHits}} {
			if x.c != nil {
				parts = append(parts, fmt.Sprintf("%s %s", x.name, num(x.c.Server)))
			}
		}
		l += "the second witness agrees: " + strings.Join(parts, ", ")
	case VerdictMismatch:
		l += "MISMATCH"
	case VerdictForeign:
		l += "foreign requests"
	default:
		l += "no comparison"
	}
	if len(w.Notes) > 0 {
		l += "; " + strings.Join(w.Notes, "; ")
	}
	return l
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

func signedNum(v float64) string {
	if v > 0 {
		return "+" + num(v)
	}
	return num(v)
}

// SortByTime orders one URL's samples by their time (RFC 3339 in UTC
// with nanoseconds sorts as text once the fraction is padded; parsed
// here to be safe across shards' writers).
func SortByTime(ms []records.Metrics) {
	slices.SortStableFunc(ms, func(a, b records.Metrics) int { return strings.Compare(timeKey(a.Time), timeKey(b.Time)) })
}

func timeKey(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
}
