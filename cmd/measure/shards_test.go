package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardsMerge: two shards' outputs concatenated, each after its run
// record, the second's first request 50 ms after the first's: measure
// checks the merge (complete: one turn each) and, with --max-start-skew
// 10ms, says they did not start together; --max-start-skew 0 is a usage
// error.
func TestShardsMerge(t *testing.T) {
	usage := `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`
	shardRun := func(shard string) string {
		return strings.Replace(runLine(1), `"conversations":2`, `"shard":"`+shard+`","turns":1,"conversations":2`, 1)
	}
	later := strings.Replace(strings.Replace(liveRecord("c1", hiPayload, usage), `"start_ns":1000`, `"start_ns":50001000`, 1), `"conversation_index":0`, `"conversation_index":1`, 1)
	in := shardRun("0/2") + liveRecord("c0", hiPayload, usage) + shardRun("1/2") + later
	sum := filepath.Join(t.TempDir(), "s.json")
	code, _, errs := runCLI(in, "--summary", "--summary-json", sum, "--max-start-skew", "10ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Shards struct {
			N           int      `json:"n"`
			Complete    *bool    `json:"complete"`
			StartSkewMs *float64 `json:"start_skew_ms"`
			LimitMs     float64  `json:"start_skew_limit_ms"`
			Together    bool     `json:"together"`
		} `json:"shards"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	sh := s.Shards
	if sh.N != 2 || sh.Complete == nil || !*sh.Complete || sh.StartSkewMs == nil || *sh.StartSkewMs != 50 || sh.LimitMs != 10 || sh.Together {
		t.Errorf("shards: %s", data)
	}
	if !strings.Contains(errs, "shards: the shards did not start together: their first requests span 50.0 ms > 10ms (--max-start-skew)") {
		t.Errorf("--summary does not say the shards did not start together:\n%s", errs)
	}
	if code, _, errs := runCLI(in, "--max-start-skew", "0s"); code != 2 || !strings.Contains(errs, "--max-start-skew") {
		t.Errorf("--max-start-skew 0s: exit %d, %q; want 2 naming the flag", code, errs)
	}
}
