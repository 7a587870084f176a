package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

// TestOSLParamsDoNotCount: send --exact-osl's members are sampling
// parameters: measure counts a body with them as without them, on every
// profile and through the template.
func TestOSLParamsDoNotCount(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{ApplyChatTemplate: true})
	base := `{"model":"m","messages":[{"role":"user","content":"How long is a piece of string?"}],"max_tokens":64`
	var want int
	for i, extra := range []string{``, `,"ignore_eos":true,"min_tokens":64`, `,"n_predict":64,"ignore_eos":true`} {
		var got struct {
			ISL records.ISL `json:"isl"`
		}
		if err := json.Unmarshal(one(t, m, `{"payload":`+base+extra+`}}`), &got); err != nil {
			t.Fatal(err)
		}
		if got.ISL.Templated == nil {
			t.Fatalf("%s: not templated: %+v", extra, got.ISL)
		}
		if i == 0 {
			want = *got.ISL.Templated
		} else if *got.ISL.Templated != want {
			t.Errorf("%s: templated %d, without it %d", extra, *got.ISL.Templated, want)
		}
	}
}

// sendRecordWith is a live send record of max_tokens 8 with the given result.
func sendRecordWith(mode, result string) string {
	return fmt.Sprintf(`{"kind":"islkit.request","schema_version":%d,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":5,"max_tokens":8,"output_length":{"mode":%q,"server":"vllm"},"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,"payload":{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8},"result":%s}`,
		records.SchemaVersion, mode, result)
}

// TestOSLPerRequest: measure records, for each live request, the
// server's count, its reasoning tokens, the streamed text re-encoded (Qwen3
// ids from the Rust library: "Hello world" is 2 tokens), the finish reason,
// and the cause of a miss.
func TestOSLPerRequest(t *testing.T) {
	m := sharedMeasurer(t, "qwen3", Options{})
	timing := `"start_ns":1,"latency_ns":5,"status":200,"stream":true`
	for _, tc := range []struct {
		name, result string
		want         records.OSL
	}{
		{"exact", `{` + timing + `,"ok":true,"finish_reason":"length","output_text":"Hello world","usage":{"prompt_tokens":3,"completion_tokens":8}}`,
			records.OSL{Target: 8, Asked: "exact", Received: 8, ReceivedFrom: "server", Error: 0, FinishReason: "length", Cause: records.OSLExact}},
		{"eos", `{` + timing + `,"ok":true,"finish_reason":"stop","output_text":"Hello world","usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			records.OSL{Target: 8, Asked: "exact", Received: 2, ReceivedFrom: "server", Error: -6, FinishReason: "stop", Cause: records.OSLStoppedEarly}},
		{"cut", `{` + timing + `,"ok":true,"finish_reason":"length","output_text":"Hello world","usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			records.OSL{Target: 8, Asked: "exact", Received: 2, ReceivedFrom: "server", Error: -6, FinishReason: "length", Cause: records.OSLLengthCut}},
		{"midstream", `{` + timing + `,"ok":false,"output_text":"Hello world","error":{"kind":"truncated","message":"x"}}`,
			records.OSL{Target: 8, Asked: "exact", Received: 2, ReceivedFrom: "reencoded", Error: -6, Cause: records.OSLFailedMidStream}},
	} {
		var got struct {
			ISL records.ISL `json:"isl"`
		}
		if err := json.Unmarshal(one(t, m, sendRecordWith("exact", tc.result)), &got); err != nil {
			t.Fatal(err)
		}
		o := got.ISL.OSL
		if o == nil {
			t.Fatalf("%s: no osl", tc.name)
		}
		if o.Reencoded == nil || *o.Reencoded != 2 {
			t.Errorf("%s: reencoded %v, want 2", tc.name, o.Reencoded)
		}
		if o.Server != nil && (o.ReencodedDiff == nil || *o.ReencodedDiff != 2-*o.Server) {
			t.Errorf("%s: reencoded_diff %v", tc.name, o.ReencodedDiff)
		}
		g := *o
		g.Server, g.Reasoning, g.Reencoded, g.ReencodedDiff = nil, nil, nil, nil
		if g != tc.want {
			t.Errorf("%s: osl %+v, want %+v", tc.name, g, tc.want)
		}
	}
	// Reasoning tokens reported inside the count are kept.
	var got struct {
		ISL records.ISL `json:"isl"`
	}
	json.Unmarshal(one(t, m, sendRecordWith("exact", `{`+timing+`,"ok":true,"finish_reason":"length","output_text":"Hello","reasoning_text":"world","usage":{"completion_tokens":8,"reasoning_tokens":3}}`)), &got)
	if o := got.ISL.OSL; o == nil || o.Reasoning == nil || *o.Reasoning != 3 || o.Cause != records.OSLExact {
		t.Errorf("reasoning: %+v", got.ISL.OSL)
	}
}

// TestOSLAIPerfRaw: an AIPerf raw export gets the same check: the target is
// each payload's max_tokens, the server's count the last usage among its
// raw responses (read here with a regular expression, not measure's
// parser), the output its streamed deltas.
func TestOSLAIPerfRaw(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "testdata", "aiperf", "profile_export_raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m := sharedMeasurer(t, "qwen3", Options{})
	maxTok := regexp.MustCompile(`"max_tokens": (\d+)`)
	usage := regexp.MustCompile(`\\"completion_tokens\\": (\d+)`)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i, l := range lines {
		wantTarget, _ := strconv.Atoi(maxTok.FindStringSubmatch(l)[1])
		all := usage.FindAllStringSubmatch(l, -1)
		wantServer, _ := strconv.Atoi(all[len(all)-1][1])
		var got struct {
			ISL records.ISL `json:"isl"`
		}
		if err := json.Unmarshal(one(t, m, l), &got); err != nil {
			t.Fatal(err)
		}
		o := got.ISL.OSL
		if o == nil || o.Target != wantTarget || o.Server == nil || *o.Server != wantServer || o.Received != wantServer || o.Asked != "" {
			t.Errorf("line %d: osl %+v, want target %d, server %d", i+1, o, wantTarget, wantServer)
			continue
		}
		if o.Reencoded == nil || *o.Reencoded != m.opts.Tokenizer.Count(strings.Repeat("tok", strings.Count(l, `\"content\": \"tok\"`))) {
			t.Errorf("line %d: reencoded %v", i+1, o.Reencoded)
		}
	}
}
