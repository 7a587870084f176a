package main

import (
	"strings"
	"testing"
)

// TestClientSaturation: live records whose schedule lags are 2, 4 and 12
// ms have a p99 lag of 4 + 0.98·8 = 11.84 ms: under --client-lag-limit
// 20ms the summary is calm, under the default 5 ms it says the client
// was saturated.
func TestClientSaturation(t *testing.T) {
	head := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10},"schedule_lag_ns":`
	var in strings.Builder
	for _, lag := range []string{"2000000", "4000000", "12000000"} {
		in.WriteString(head + lag + "}}\n")
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
