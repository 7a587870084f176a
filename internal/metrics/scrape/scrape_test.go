package scrape

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/metrics"
	"github.com/islkit/islkit/internal/records"
)

// vllmBody is a /metrics page as vLLM's prometheus_client writes it
// (trimmed; values made up, so every expectation below is by hand).
const vllmBody = `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 12345.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.25
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1000.0
vllm:prompt_tokens_total{engine="1",model_name="Qwen/Qwen3-0.6B"} 24.0
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="Qwen/Qwen3-0.6B"} 7.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="Qwen/Qwen3-0.6B"} 2.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 4.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 9.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 9.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 1.5
# HELP vllm:weird gauge
# TYPE vllm:weird gauge
vllm:weird NaN
`

func TestParseDefaultVLLM(t *testing.T) {
	got, err := Parse(strings.NewReader(vllmBody), DefaultSelection("vllm"))
	if err != nil {
		t.Fatal(err)
	}
	l := func(kv ...string) map[string]string {
		m := map[string]string{"engine": "0", "model_name": "Qwen/Qwen3-0.6B"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	h := func(kv ...string) map[string]string {
		m := map[string]string{"engine": "0", "model_name": "m"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	want := []records.MetricSample{
		{Name: "vllm:kv_cache_usage_perc", Labels: l(), Value: 0.25},
		{Name: "vllm:num_requests_running", Labels: l(), Value: 3},
		{Name: "vllm:prompt_tokens_total", Labels: l(), Value: 1000},
		{Name: "vllm:prompt_tokens_total", Labels: l("engine", "1"), Value: 24},
		{Name: "vllm:request_success_total", Labels: l("finished_reason", "stop"), Value: 7},
		{Name: "vllm:request_success_total", Labels: l("finished_reason", "length"), Value: 2},
		{Name: "vllm:time_to_first_token_seconds_bucket", Labels: h("le", "0.1"), Value: 4},
		{Name: "vllm:time_to_first_token_seconds_bucket", Labels: h("le", "+Inf"), Value: 9},
		{Name: "vllm:time_to_first_token_seconds_sum", Labels: h(), Value: 1.5},
		{Name: "vllm:time_to_first_token_seconds_count", Labels: h(), Value: 9},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	c := metrics.CountersOf(got)
	if c.Server != "vllm" || *c.PromptTokens != 1024 || *c.Requests != 9 || c.PrefixHits != nil {
		t.Errorf("counters %+v", c)
	}
}

func TestSelection(t *testing.T) {
	sel, err := ParseSelection("vllm:prompt_tokens, vllm:time_*,python_gc_objects_collected_total")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"vllm:prompt_tokens_total":          true, // a counter's _total
		"vllm:prompt_tokens":                true,
		"vllm:time_to_first_token_seconds":  true,
		"vllm:generation_tokens_total":      false,
		"python_gc_objects_collected_total": true,
		"vllm:prompt_tokens_total_x":        false,
	} {
		if sel.Has(name) != want {
			t.Errorf("Has(%q) = %v, want %v", name, !want, want)
		}
	}
	for _, bad := range []string{"", "a,,b", "vllm:*x", "*vllm", `a{b="c"}`} {
		if _, err := ParseSelection(bad); err == nil {
			t.Errorf("ParseSelection(%q): no error", bad)
		}
	}
	if !DefaultSelection("sglang").Has("sglang:prompt_tokens_total") || DefaultSelection("sglang").Has("vllm:prompt_tokens_total") {
		t.Error("sglang's default series")
	}
	if d := DefaultSelection(""); !d.Has("sglang:cached_tokens_total") || !d.Has("vllm:prefix_cache_hits_total") {
		t.Error("an unknown server's default is both sets")
	}
}

func TestParseRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"not text format": "<html>nope</html>\n",
		"bad value":       "a_total 1x\n",
		"two TYPEs":       "# TYPE a counter\n# TYPE a gauge\na 1\n",
	} {
		if _, err := Parse(strings.NewReader(body), Selection{prefixes: []string{""}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	big := strings.Repeat("# padding comment\n", MaxBody/18+2)
	if _, err := Parse(strings.NewReader(big), Selection{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a body over MaxBody: %v", err)
	}
}

func TestURLNextTo(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000":                 "http://127.0.0.1:8000/metrics",
		"http://h:8000/v1/chat/completions?x=1": "http://h:8000/metrics",
		"https://user:pw@h/v1":                  "https://user:pw@h/metrics",
		"not a url":                             "",
	} {
		if got := URLNextTo(in); got != want {
			t.Errorf("URLNextTo(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Redacted("https://user:pw@h/metrics"); got != "https://user:xxxxx@h/metrics" {
		t.Errorf("Redacted: %q", got)
	}
}

// FuzzParse: any body parses or is refused, never panics, and what it
// keeps is finite.
func FuzzParse(f *testing.F) {
	f.Add(vllmBody)
	f.Add("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 3\n")
	f.Add("a{le=\"+Inf\"} +Inf\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 1.5\nh_count 2.5\n")
	f.Add("\"utf8.name\"{a=\"\\n\"} 1 123\n")
	f.Add("{}") // crashed expfmt v0.67.4
	f.Fuzz(func(t *testing.T, body string) {
		got, err := Parse(strings.NewReader(body), Selection{prefixes: []string{""}})
		if err != nil {
			return
		}
		for _, s := range got {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				t.Fatalf("non-finite value kept: %+v", s)
			}
		}
		metrics.CountersOf(got)
	})
}
