package records

import (
	"encoding/json"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/testutil"
)

func TestRequestJSON(t *testing.T) {
	ttft := int64(1500)
	cached, twenty := 0, 20
	r := Request{Kind: KindRequest, SchemaVersion: SchemaVersion, BenchmarkID: "bench", ConversationID: "c",
		Turn: 1, Pass: 2, TargetISL: 100, MaxTokens: 8, Marker: "[rid:eb232ceb3496]\n\n",
		CacheBust: cachebust.FirstTurnPrefix, Landing: cachebust.Landing{Slot: cachebust.FirstUserTurn, Prefix: true},
		Payload: json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"x"}]}`),
		Result: &Result{StartNs: 1, LatencyNs: 2000, TTFTNs: &ttft, ITLNs: []int64{10}, Status: 200, OK: true, Stream: true,
			Usage: &Usage{PromptTokens: &twenty, CompletionTokens: 8, TotalTokens: new(28), CachedTokens: &cached}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"bench","conversation_id":"c","conversation_index":0,"turn":1,"pass":2,"target_isl":100,"max_tokens":8,"marker":"[rid:eb232ceb3496]\n\n","cache_bust":"first_turn_prefix","marker_landing":"first_user_turn/prefix","dry_run":false,"payload":{"model":"m","messages":[{"role":"user","content":"x"}]},"result":{"start_ns":1,"latency_ns":2000,"ttft_ns":1500,"itl_ns":[10],"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28,"cached_tokens":0}}}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	testutil.ValidateSchema(t, "request.schema.json", data)
	// A failed request needs its error; a dry run must not have a result.
	var doc map[string]any
	json.Unmarshal(data, &doc)
	doc["result"].(map[string]any)["ok"] = false
	bad, _ := json.Marshal(doc)
	if testutil.SchemaError(t, "request.schema.json", bad) == nil {
		t.Error("schema accepted a failed result without an error")
	}
}
