// Package scrape reads a server's Prometheus metrics for send
// --scrape-metrics: the text format, parsed by prometheus/common's expfmt,
// the series chosen by name or prefix, with a default set per server. A
// package of its own so that measure, which reads the samples back from
// the records (internal/metrics), does not link the parser and its
// protobuf types.
package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/islkit/islkit/internal/records"
)

// MaxBody bounds a scrape's body: a server's /metrics is untrusted input
// (vLLM's is some tens of KiB; a large multi-model server a few MiB).
const MaxBody = 16 << 20

// Default series of each server (their families as exposed: a counter
// with its _total, a histogram by its base name). Sources: vLLM's
// vllm/v1/metrics/loggers.py (PrometheusStatLogger), SGLang's
// python/sglang/srt/metrics/collector.py.
var (
	vllmSeries = []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting",
		"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", // the second is the name before vLLM 0.9
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total",
		"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
		"vllm:request_success_total", "vllm:num_preemptions_total",
		"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
		"vllm:time_per_output_token_seconds", "vllm:request_time_per_output_token_seconds",
		"vllm:e2e_request_latency_seconds",
	}
	sglangSeries = []string{
		"sglang:num_running_reqs", "sglang:num_queue_reqs",
		"sglang:token_usage", "sglang:cache_hit_rate",
		"sglang:prompt_tokens_total", "sglang:generation_tokens_total",
		"sglang:cached_tokens_total", "sglang:num_requests_total",
		"sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds",
		"sglang:e2e_request_latency_seconds",
	}
)

// Selection is the series a scrape keeps: whole family names and name
// prefixes (written with a trailing *). A name also matches its counter's
// _total family (vllm:prompt_tokens keeps vllm:prompt_tokens_total).
type Selection struct {
	names    []string
	prefixes []string
}

// DefaultSelection is the default series for a server profile: vLLM's or
// SGLang's, both for any other (their prefixes never collide).
func DefaultSelection(server string) Selection {
	switch server {
	case "vllm":
		return Selection{names: vllmSeries}
	case "sglang":
		return Selection{names: sglangSeries}
	}
	return Selection{names: slices.Concat(vllmSeries, sglangSeries)}
}

// ParseSelection reads --metrics-series: comma-separated names, a
// trailing * making a prefix ("vllm:*" keeps every vLLM series).
func ParseSelection(spec string) (Selection, error) {
	var s Selection
	for e := range strings.SplitSeq(spec, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			return Selection{}, fmt.Errorf("%q: an empty series name (want names or prefixes*, separated by commas)", spec)
		case strings.ContainsAny(e, " \t\"{}"):
			return Selection{}, fmt.Errorf("%q: not a series name (want a name such as vllm:prompt_tokens_total or a prefix such as vllm:*)", e)
		case strings.HasSuffix(e, "*"):
			p := strings.TrimSuffix(e, "*")
			if strings.Contains(p, "*") {
				return Selection{}, fmt.Errorf("%q: only a trailing * (a prefix) is understood", e)
			}
			s.prefixes = append(s.prefixes, p)
		case strings.Contains(e, "*"):
			return Selection{}, fmt.Errorf("%q: only a trailing * (a prefix) is understood", e)
		default:
			s.names = append(s.names, e)
		}
	}
	return s, nil
}

// Has reports whether the family named name is kept.
func (s Selection) Has(name string) bool {
	for _, n := range s.names {
		if name == n || name == n+"_total" {
			return true
		}
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ErrTooLarge is a body over MaxBody.
var ErrTooLarge = fmt.Errorf("metrics body over %d MiB", MaxBody>>20)

// Parse reads a Prometheus text-format body (at most MaxBody bytes) and
// returns the samples of the selected families, by family name then in
// the body's order: a counter or gauge its value; a histogram its _bucket
// series (label le), _sum and _count; a summary its quantiles (label
// quantile), _sum and _count. Values that are not finite are left out
// (JSON cannot carry them).
func Parse(r io.Reader, sel Selection) ([]records.MetricSample, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxBody {
		return nil, ErrTooLarge
	}
	fams, err := parseText(body)
	if err != nil {
		var pe expfmt.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("not the Prometheus text format: %w", err)
		}
		return nil, err
	}
	var out []records.MetricSample
	names := make([]string, 0, len(fams))
	for name := range fams {
		if sel.Has(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, m := range fams[name].GetMetric() {
			out = appendMetric(out, name, m)
		}
	}
	return out, nil
}

// parseText runs expfmt's parser, its panics made errors: FuzzParse found
// bodies that crash it (v0.67.4: "{}", a label set without a name).
func parseText(body []byte) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if p := recover(); p != nil {
			fams, err = nil, fmt.Errorf("not the Prometheus text format (the parser failed: %v)", p)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

func appendMetric(out []records.MetricSample, name string, m *dto.Metric) []records.MetricSample {
	labels := func(extra ...string) map[string]string {
		if len(m.GetLabel()) == 0 && len(extra) == 0 {
			return nil
		}
		l := make(map[string]string, len(m.GetLabel())+1)
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if len(extra) == 2 {
			l[extra[0]] = extra[1]
		}
		return l
	}
	add := func(name string, v float64, l map[string]string) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, records.MetricSample{Name: name, Labels: l, Value: v})
		}
	}
	switch {
	case m.Counter != nil:
		add(name, m.Counter.GetValue(), labels())
	case m.Gauge != nil:
		add(name, m.Gauge.GetValue(), labels())
	case m.Untyped != nil:
		add(name, m.Untyped.GetValue(), labels())
	case m.Histogram != nil:
		h := m.Histogram
		for _, b := range h.GetBucket() {
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			add(name+"_bucket", c, labels("le", formatFloat(b.GetUpperBound())))
		}
		add(name+"_sum", h.GetSampleSum(), labels())
		c := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			c = h.GetSampleCountFloat()
		}
		add(name+"_count", c, labels())
	case m.Summary != nil:
		s := m.Summary
		for _, q := range s.GetQuantile() {
			add(name, q.GetValue(), labels("quantile", formatFloat(q.GetQuantile())))
		}
		add(name+"_sum", s.GetSampleSum(), labels())
		add(name+"_count", float64(s.GetSampleCount()), labels())
	}
	return out
}

// formatFloat writes a bound as Prometheus does (+Inf, 0.25).
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// URLNextTo is the /metrics address of the server at base (send's --url:
// a base or a full endpoint URL): its scheme, user and host, path
// /metrics; "" when base is no URL.
func URLNextTo(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return ""
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/metrics", "", "", ""
	return u.String()
}

// Redacted is u without its password, for the records.
func Redacted(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}
