package send

import (
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
)

// encoded is a record as jsonl.Writer's encoder writes it.
func encoded(t *testing.T, r *records.Request) string {
	t.Helper()
	want, err := json.MarshalWithOption(r, json.DisableHTMLEscape())
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

func checkRecord(t *testing.T, r *records.Request) {
	t.Helper()
	got, ok := appendRecord([]byte("x"), r)
	if !ok {
		t.Fatalf("appendRecord left %+v to the encoder", r)
	}
	if want := encoded(t, r); string(got[1:]) != want {
		t.Fatalf("appendRecord:\n%s\nencoder:\n%s", got[1:], want)
	}
}

// TestAppendRecord: every field of a live record, set and unset, is
// written as the records' encoder writes it.
func TestAppendRecord(t *testing.T) {
	n := func(v int) *int { return &v }
	n64 := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	checkRecord(t, &records.Request{})
	checkRecord(t, &records.Request{Result: &records.Result{}})
	full := records.Request{Kind: records.KindRequest, SchemaVersion: records.SchemaVersion, BenchmarkID: "b<&>",
		Endpoint: endpoint.Responses, ConversationID: "c\u2028\"x\"", ConversationIndex: -3, Turn: 2, Pass: 7, TargetISL: 1000,
		ExpectedISL: n(999), ResizedFrom: n(0), ResizedTo: n(12), ExpectedCachedTokens: n(64), MaxTokens: 10,
		Marker: "[rid:abc]\n\n", CacheBust: cachebust.FirstTurnPrefix, Landing: cachebust.Route(cachebust.FirstTurnPrefix, true),
		DryRun: true, SyntheticHistory: true, Warmup: true,
		Result: &records.Result{StartNs: 1796132593231491493, ScheduledNs: n64(-1), ScheduleLagNs: n64(0), ClientCPU: f(0.123),
			LatencyNs: 5, TTFTNs: n64(3), ITLNs: []int64{1, -2, 3}, Status: 500, OK: true, Stream: true, Chunks: 11,
			FinishReason: "length", OutputText: "tok\x01\xff", Reasoning: "think\t", Retried: true,
			Usage: &records.Usage{PromptTokens: n(10), CompletionTokens: 2, TotalTokens: 12, ReasoningTokens: n(1), CachedTokens: n(0)},
			Error: &records.RequestError{Kind: records.ErrHTTP5xx, Message: "500 <b>", Body: `{"error":"x"}`, Code: "42", Type: "t"}}}
	checkRecord(t, &full)
	for _, cpu := range []float64{0, 1, 0.001, 1.5, 1e-7, 123456789, 1e21, -0.25} {
		r := full
		res := *full.Result
		res.ClientCPU = f(cpu)
		res.Usage = &records.Usage{CompletionTokens: 1}
		res.Error = &records.RequestError{Kind: records.ErrTimeout}
		r.Result = &res
		checkRecord(t, &r)
	}
	if _, ok := appendRecord(nil, &records.Request{Payload: []byte(`{}`)}); ok {
		t.Error("a payload was not left to the encoder")
	}
	if _, ok := appendRecord(nil, &records.Request{Unreachable: &records.Unreachable{}}); ok {
		t.Error("an unreachable target was not left to the encoder")
	}
}

// FuzzAppendRecord: records of any strings and numbers are written as the
// encoder writes them.
func FuzzAppendRecord(f *testing.F) {
	f.Add("c1", "tok tok", "length", "", int64(5), 3, 0.5, true)
	f.Add("<&>", "\u2028\xff\x00", "", "connection", int64(-1), 0, 1e-9, false)
	f.Fuzz(func(t *testing.T, id, out, finish, errKind string, ns int64, turn int, cpu float64, ok bool) {
		r := records.Request{Kind: records.KindRequest, ConversationID: id, Turn: turn, Marker: out,
			Result: &records.Result{StartNs: ns, TTFTNs: &ns, ClientCPU: &cpu, OK: ok, OutputText: out, FinishReason: finish, Chunks: turn}}
		if errKind != "" {
			r.Result.Error = &records.RequestError{Kind: errKind, Message: out, Code: id}
		}
		got, fast := appendRecord(nil, &r)
		want, err := json.MarshalWithOption(&r, json.DisableHTMLEscape())
		if !fast {
			if err == nil {
				t.Fatalf("appendRecord left a record the encoder writes: %s", want)
			}
			return
		}
		if err != nil || string(got) != string(want) {
			t.Fatalf("appendRecord:\n%s\nencoder (%v):\n%s", got, err, want)
		}
	})
}
