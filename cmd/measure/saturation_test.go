package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestClientSaturation: live records whose schedule lags are 2, 4 and 12
// ms have a p99 lag of 4 + 0.98·8 = 11.84 ms: under --client-lag-limit
// 20ms the summary is calm, under the default 5 ms it says the client
// was saturated.
func TestClientSaturation(t *testing.T) {
	head := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10},"schedule_lag_ns":`
	var in strings.Builder
	for i, lag := range []string{"2000000", "4000000", "12000000"} {
		// One conversation each: one request recorded three times would be refused.
		in.WriteString(strings.Replace(head, `"conversation_id":"c"`, fmt.Sprintf(`"conversation_id":"c%d"`, i), 1) + lag + "}}\n")
	}
	code, _, errs := runCLI(in.String(), "--summary")
	if code != 0 || !strings.Contains(errs, "WARNING: the client was saturated (schedule lag p99 11.84 ms > 5ms") {
		t.Errorf("default limit: exit %d\n%s", code, errs)
	}
	code, _, errs = runCLI(in.String(), "--summary", "--client-lag-limit", "20ms")
	if code != 0 || strings.Contains(errs, "saturated") || !strings.Contains(errs, "schedule lag") {
		t.Errorf("20 ms limit: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(in.String(), "--client-cpu-limit", "2"); code != 2 || !strings.Contains(errs, "--client-cpu-limit 2") {
		t.Errorf("bad limit: exit %d %q", code, errs)
	}
}

// TestSizingLagNoted: the same lags, 10.9 ms of the 12 being send
// --exact's sizing (sizing_ns; 0 on the others): the lag besides it is
// 2, 4 and 1.1 ms, p99 2 + 0.98·2 = 3.96 ms, under the limit. The summary
// notes the late requests and does not call the client saturated; its
// JSON says the same and passes the schema.
func TestSizingLagNoted(t *testing.T) {
	head := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10},`
	var in strings.Builder
	for i, l := range []string{`"schedule_lag_ns":2000000,"sizing_ns":0`, `"schedule_lag_ns":4000000,"sizing_ns":0`, `"schedule_lag_ns":12000000,"sizing_ns":10900000`} {
		in.WriteString(strings.Replace(head, `"conversation_id":"c"`, fmt.Sprintf(`"conversation_id":"c%d"`, i), 1) + l + "}}\n")
	}
	out := filepath.Join(t.TempDir(), "summary.json")
	code, _, errs := runCLI(in.String(), "--summary", "--summary-json", out)
	if code != 0 || strings.Contains(errs, "saturated") ||
		!strings.Contains(errs, "note: requests went out late (schedule lag p99 11.84 ms > 5ms) because --exact sized each one first (sizing p99 10.68 ms, the lag besides it 3.96 ms)") {
		t.Errorf("exit %d\n%s", code, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var sum struct {
		Performance struct {
			Client struct {
				Saturated bool     `json:"saturated"`
				Notes     []string `json:"notes"`
				OwnP99    float64  `json:"schedule_lag_without_sizing_p99_ms"`
			} `json:"client"`
		} `json:"performance"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if c := sum.Performance.Client; c.Saturated || len(c.Notes) != 1 || math.Abs(c.OwnP99-3.96) > 1e-9 {
		t.Errorf("JSON client verdict %+v", c)
	}
}
