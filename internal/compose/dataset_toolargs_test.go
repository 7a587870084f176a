package compose

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/workload"
)

// TestDatasetToolArgumentsObject: a dataset dialog whose assistant tool
// call gives function.arguments as a JSON object is a body a real vLLM
// 0.32 answers 400 to (testdata/vllm/expectations.jsonl.gz,
// tool_args_dict), so compose --server vllm leaves it out with the rule as
// its reason and never writes it; the same call with string arguments is
// composed, and SGLang, which takes an object, composes both.
func TestDatasetToolArgumentsObject(t *testing.T) {
	line := func(args string) string {
		return `{"messages":[{"role":"user","content":"What's the weather in Paris?"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":` + args + `}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"22C"},{"role":"assistant","content":"It is 22C."},` +
			`{"role":"user","content":"And tomorrow?"},{"role":"assistant","content":"Sunny."}]}`
	}
	data := line(`{"city":"Paris"}`) + "\n" + line(`"{\"city\":\"Paris\"}"`) + "\n"
	for _, tc := range []struct {
		server  serverprofile.Profile
		convs   int
		skipped int
	}{{serverprofile.VLLM, 1, 1}, {serverprofile.SGLang, 2, 0}} {
		dialogs, skipped, _, err := workload.ReadDataset(strings.NewReader(data), "tools.jsonl", "openai")
		if err != nil || len(skipped) != 0 || len(dialogs) != 2 {
			t.Fatalf("dataset: %d dialogs, skipped %v, %v", len(dialogs), skipped, err)
		}
		p, m := realProbe(t, "", cachebust.None)
		d, err := NewDataset(p, m, DatasetOptions{OSL: 8, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 1, Server: tc.server})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := jsonl.NewWriter(&buf)
		if err := d.Run(context.Background(), w, dialogs); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		convs := decodeConvs(t, buf.String())
		sk := d.Skipped()
		if len(convs) != tc.convs || len(sk) != tc.skipped {
			t.Fatalf("%s: %d conversations, skipped %v; want %d and %d skipped", tc.server, len(convs), sk, tc.convs, tc.skipped)
		}
		if tc.skipped > 0 && (sk[0].Line != 1 || !strings.Contains(sk[0].Reason, "tool-call arguments must be a string")) {
			t.Errorf("%s: skipped %+v, want line 1 with the arguments rule", tc.server, sk[0])
		}
		if tc.server == serverprofile.VLLM && strings.Contains(buf.String(), `"arguments":{`) {
			t.Errorf("vllm: an object argument was written:\n%s", buf.String())
		}
	}
}
