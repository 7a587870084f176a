package testserver

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// FaultDoublePromptTokens makes the server's /metrics count the
// request's prompt tokens twice (its usage still reports them once): a
// server whose own counters are wrong, for send --scrape-metrics and
// measure's second witness to catch. Not drawn when Faults is empty.
const FaultDoublePromptTokens = "double_prompt_tokens"

// PathMetrics is where Config.Metrics serves the server's counters.
const PathMetrics = "/metrics"

// ttftBuckets are vLLM's time_to_first_token_seconds buckets
// (vllm/v1/metrics/loggers.py).
var ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
	0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// serverMetrics are the counters /metrics exposes under vLLM's names,
// counted from the requests served: prompt tokens when a prompt is
// counted (prefilled), prefix-cache queries and hits with it, generation
// tokens and the finished request (by finish reason) before a reply's
// last byte, so a client that has read its answers whole sees them in the
// next scrape.
type serverMetrics struct {
	prompt, generation      atomic.Int64
	queries, hits           atomic.Int64
	running                 atomic.Int64
	finishedStop, finishedN atomic.Int64 // finishedN: finish_reason length

	mu      sync.Mutex
	ttft    []uint64 // per bucket, not cumulative; the last is +Inf
	ttftSum float64
}

// Counters is the server's own count of what it served (what /metrics
// says), for tests to compare with.
type Counters struct {
	PromptTokens, GenerationTokens int64
	PrefixQueries, PrefixHits      int64
	Finished                       int64
}

// Counters returns what /metrics counts now.
func (s *Server) Counters() Counters {
	m := &s.metrics
	return Counters{PromptTokens: m.prompt.Load(), GenerationTokens: m.generation.Load(),
		PrefixQueries: m.queries.Load(), PrefixHits: m.hits.Load(),
		Finished: m.finishedStop.Load() + m.finishedN.Load()}
}

// prefilled counts a request's prompt as the server's counters see it.
func (m *serverMetrics) prefilled(prompt, cached int, cache bool, fault string) {
	n := int64(prompt)
	if fault == FaultDoublePromptTokens {
		n *= 2
	}
	m.prompt.Add(n)
	if cache {
		m.queries.Add(int64(prompt))
		m.hits.Add(int64(cached))
	}
}

// firstToken observes a time to first token.
func (m *serverMetrics) firstToken(d time.Duration) {
	sec := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ttft == nil {
		m.ttft = make([]uint64, len(ttftBuckets)+1)
	}
	i := len(ttftBuckets)
	for k, b := range ttftBuckets {
		if sec <= b {
			i = k
			break
		}
	}
	m.ttft[i]++
	m.ttftSum += sec
}

// finished counts a reply served whole.
func (m *serverMetrics) finished(o *output) {
	m.generation.Add(int64(o.n))
	if o.finish == "length" {
		m.finishedN.Add(1)
	} else {
		m.finishedStop.Add(1)
	}
}

// metricsLabels are vLLM's labels of every series.
const metricsLabels = `model_name="islkit-test",engine="0"`

// writeMetrics writes the counters in the Prometheus text format, as
// vLLM's prometheus_client does.
// waiting is the requests queued for a place (MaxConcurrency): counted
// among running by the handler, they are in no batch yet.
func (m *serverMetrics) write(w io.Writer, waiting int64) {
	family := func(name, typ, help string) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	one := func(name, typ, help string, v int64) {
		family(name, typ, help)
		fmt.Fprintf(w, "%s{%s} %d\n", name, metricsLabels, v)
	}
	one("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", max(m.running.Load()-waiting, 0))
	one("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting)
	one("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", m.prompt.Load())
	one("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", m.generation.Load())
	one("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", m.queries.Load())
	one("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", m.hits.Load())
	family("vllm:request_success_total", "counter", "Count of successfully processed requests.")
	fmt.Fprintf(w, "vllm:request_success_total{%s,finished_reason=\"stop\"} %d\n", metricsLabels, m.finishedStop.Load())
	fmt.Fprintf(w, "vllm:request_success_total{%s,finished_reason=\"length\"} %d\n", metricsLabels, m.finishedN.Load())
	m.mu.Lock()
	counts, sum := append([]uint64(nil), m.ttft...), m.ttftSum
	m.mu.Unlock()
	if counts == nil {
		counts = make([]uint64, len(ttftBuckets)+1)
	}
	const ttft = "vllm:time_to_first_token_seconds"
	family(ttft, "histogram", "Histogram of time to first token in seconds.")
	var cum uint64
	for i, c := range counts {
		cum += c
		le := "+Inf"
		if i < len(ttftBuckets) {
			le = strconv.FormatFloat(ttftBuckets[i], 'f', -1, 64)
		}
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", ttft, metricsLabels, le, cum)
	}
	fmt.Fprintf(w, "%s_sum{%s} %s\n", ttft, metricsLabels, strconv.FormatFloat(sum, 'g', -1, 64))
	fmt.Fprintf(w, "%s_count{%s} %d\n", ttft, metricsLabels, cum)
}

func (s *Server) serveMetrics(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.write(w, s.waiting.Load())
}
