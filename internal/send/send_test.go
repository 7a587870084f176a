package send

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// conv builds a compose-like conversation with the landing compose would
// record.
func conv(id string, index int, target cachebust.Target, system string, turns ...string) records.Conversation {
	c := records.Conversation{Kind: records.KindConversation, SchemaVersion: records.SchemaVersion,
		ID: id, Index: index, BenchmarkID: "bench", CacheBust: target, Model: "test-model"}
	if system != "" {
		c.SystemPrompt = &records.SystemPrompt{Text: system}
	}
	c.Landing = cachebust.Route(target, system != "")
	for i, text := range turns {
		c.Turns = append(c.Turns, records.Turn{Index: i, TargetISL: 100 + i, Text: text, MaxTokens: 4 + i,
			Assistant: fmt.Sprintf("reply %d", i)})
	}
	return c
}

type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type body struct {
	Model     string `json:"model"`
	Messages  []msg  `json:"messages"`
	MaxTokens *int   `json:"max_tokens"`
	Stream    bool   `json:"stream"`
}

func build(t *testing.T, b *Builder, c *records.Conversation, turn, pass int) (Built, body) {
	t.Helper()
	got, err := b.Build(c, turn, pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	var bd body
	if err := json.Unmarshal(got.Body, &bd); err != nil {
		t.Fatalf("%v: %s", err, got.Body)
	}
	return got, bd
}

func newBuilder(t *testing.T, o PayloadOptions) *Builder {
	t.Helper()
	b, err := NewBuilder(o, func(err error) { t.Errorf("unexpected drop: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// digest "bench:0:0:trace_a" from aiperf-behaviour.md §1.2.
const ridA = "[rid:eb232ceb3496]"

// TestInjectionWorkerCases follows AIPerf's worker injection tests (ref.
// §10) at the send level, over whole requests.
func TestInjectionWorkerCases(t *testing.T) {
	b := newBuilder(t, PayloadOptions{Stream: true})
	cases := []struct {
		name   string
		target cachebust.Target
		system string
		turn   int
		want   []msg
	}{
		{"system prefix", cachebust.SystemPrefix, "Be brief.", 0,
			[]msg{{"system", ridA + "\n\nBe brief."}, {"user", "Q0"}}},
		{"system suffix", cachebust.SystemSuffix, "Be brief.", 0,
			[]msg{{"system", "Be brief.\n\n" + ridA}, {"user", "Q0"}}},
		{"system suffix, later turn: system still marked, users not", cachebust.SystemSuffix, "Be brief.", 1,
			[]msg{{"system", "Be brief.\n\n" + ridA}, {"user", "Q0"}, {"assistant", "reply 0"}, {"user", "Q1"}}},
		{"first turn prefix skips the system message", cachebust.FirstTurnPrefix, "Be brief.", 0,
			[]msg{{"system", "Be brief."}, {"user", ridA + "\n\nQ0"}}},
		{"first turn suffix", cachebust.FirstTurnSuffix, "", 0,
			[]msg{{"user", "Q0\n\n" + ridA}}},
		{"system prefix falls back to the first user turn", cachebust.SystemPrefix, "", 0,
			[]msg{{"user", ridA + "\n\nQ0"}}},
		{"fallback at turn 1 marks turn 0's message (V-B)", cachebust.SystemSuffix, "", 1,
			[]msg{{"user", "Q0\n\n" + ridA}, {"assistant", "reply 0"}, {"user", "Q1"}}},
		{"first turn prefix at turn 2: history's first user, once", cachebust.FirstTurnPrefix, "", 2,
			[]msg{{"user", ridA + "\n\nQ0"}, {"assistant", "reply 0"}, {"user", "Q1"}, {"assistant", "reply 1"}, {"user", "Q2"}}},
		{"none passes through", cachebust.None, "Be brief.", 1,
			[]msg{{"system", "Be brief."}, {"user", "Q0"}, {"assistant", "reply 0"}, {"user", "Q1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := conv("trace_a", 0, tc.target, tc.system, "Q0", "Q1", "Q2")
			got, bd := build(t, b, &c, tc.turn, 0)
			if fmt.Sprint(bd.Messages) != fmt.Sprint(tc.want) {
				t.Errorf("messages\n got %q\nwant %q", bd.Messages, tc.want)
			}
			if strings.Count(string(got.Body), "[rid:") > 1 {
				t.Errorf("marker stacked: %s", got.Body)
			}
			if tc.target == cachebust.None && got.Marker != "" {
				t.Errorf("marker %q for none", got.Marker)
			}
		})
	}
}

// TestMarkerVectors checks the marker digests of aiperf-behaviour.md §1.2
// through the payload, and that recycled passes get new markers.
func TestMarkerVectors(t *testing.T) {
	b := newBuilder(t, PayloadOptions{})
	want := []string{"8e15353008f0", "aa4ebc4be507", "a3a0193ebdfe", "a85a26fafbc9",
		"d92da992430f", "219645128b72", "2ca036eb9f53", "a9f20f688655"}
	for i, w := range want {
		c := conv(fmt.Sprintf("estimator-%d", i), i, cachebust.FirstTurnPrefix, "", "hi")
		c.BenchmarkID = "estimator"
		got, bd := build(t, b, &c, 0, i)
		if got.Marker != "[rid:"+w+"]\n\n" || bd.Messages[0].Content != "[rid:"+w+"]\n\nhi" {
			t.Errorf("vector %d: marker %q, content %q, want digest %s", i, got.Marker, bd.Messages[0].Content, w)
		}
	}
	c := conv("trace_a", 0, cachebust.FirstTurnSuffix, "", "hi", "again")
	seen := map[string]bool{}
	for pass := range 3 {
		sum := sha256.Sum256([]byte(fmt.Sprintf("bench:%d:0:trace_a", pass)))
		wantMarker := "\n\n[rid:" + hex.EncodeToString(sum[:6]) + "]"
		for turn := range 2 {
			got, _ := build(t, b, &c, turn, pass)
			if got.Marker != wantMarker {
				t.Errorf("pass %d turn %d: marker %q, want %q", pass, turn, got.Marker, wantMarker)
			}
		}
		if seen[wantMarker] {
			t.Errorf("pass %d repeats a marker", pass)
		}
		seen[wantMarker] = true
	}
}

// TestRoutingAgreesWithInjector: over real conversation records, the
// landing compose recorded (cachebust.Route) is where the payload carries
// the marker, for all 9 cells, on every turn.
func TestRoutingAgreesWithInjector(t *testing.T) {
	b := newBuilder(t, PayloadOptions{})
	for _, target := range cachebust.Targets() {
		for _, system := range []string{"", "SYS"} {
			c := conv("trace_a", 0, target, system, "U0", "U1", "U2")
			for turn := range c.Turns {
				got, bd := build(t, b, &c, turn, 0)
				where, prefix := -1, false
				for i, m := range bd.Messages {
					if strings.Contains(m.Content, ridA) {
						if where >= 0 {
							t.Fatalf("%s/%q turn %d: two marked messages", target, system, turn)
						}
						where, prefix = i, strings.HasPrefix(m.Content, ridA)
					}
				}
				l := c.Landing
				var wantIdx int
				switch l.Slot {
				case cachebust.NoSlot:
					wantIdx = -1
				case cachebust.SharedSystemPrompt:
					wantIdx = 0
				case cachebust.FirstUserTurn:
					wantIdx = 0
					if system != "" {
						wantIdx = 1
					}
				}
				if where != wantIdx || (where >= 0 && prefix != l.Prefix) || got.Landing != l {
					t.Errorf("%s system=%q turn %d: marker in message %d (prefix %v, landing %s), compose says %s",
						target, system, turn, where, prefix, got.Landing, l)
				}
			}
		}
	}
}

func TestPayloadFields(t *testing.T) {
	c := conv("c", 0, cachebust.None, "", "hello")
	cases := []struct {
		opts PayloadOptions
		want string
	}{
		{PayloadOptions{Stream: true},
			`{"model":"test-model","messages":[{"content":"hello","role":"user"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`},
		{PayloadOptions{Model: "other", MaxTokensField: "max_completion_tokens"},
			`{"model":"other","messages":[{"content":"hello","role":"user"}],"max_completion_tokens":4,"stream":false}`},
		{PayloadOptions{Stream: true, ExtraBody: `{"ignore_eos": true, "min_tokens": 4, "chat_template_kwargs": {"enable_thinking": false}}`},
			`{"model":"test-model","messages":[{"content":"hello","role":"user"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"min_tokens":4,"chat_template_kwargs":{"enable_thinking":false}}`},
	}
	for _, tc := range cases {
		b := newBuilder(t, tc.opts)
		got, _ := build(t, b, &c, 0, 0)
		if string(got.Body) != tc.want {
			t.Errorf("%+v\n got %s\nwant %s", tc.opts, got.Body, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"messages":[]}`, `{"a":1,"a":2}`, `{"a":1} x`, `{`} {
		if _, err := NewBuilder(PayloadOptions{ExtraBody: bad}, nil); err == nil {
			t.Errorf("--extra-body %s accepted", bad)
		}
	}
}

func TestNoSpuriousDrop(t *testing.T) {
	// An empty first turn is still a string content: the marker goes in,
	// nothing is dropped and no warning is issued.
	var warned []error
	b, _ := NewBuilder(PayloadOptions{}, func(err error) { warned = append(warned, err) })
	c := conv("trace_a", 0, cachebust.FirstTurnPrefix, "", "")
	if _, err := b.Build(&c, 0, 0, nil); err != nil || len(warned) != 0 {
		t.Fatalf("empty text: err %v, warnings %v", err, warned)
	}
}

func dryRunRecords(t *testing.T, convs []records.Conversation, b *Builder, shard Shard) ([]records.Request, [][]byte) {
	t.Helper()
	var out bytes.Buffer
	n, err := DryRun(&out, convs, b, shard, FormatJSONL)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(out.Bytes()) == 0 {
		lines = nil
	}
	if len(lines) != n {
		t.Fatalf("DryRun said %d, wrote %d lines", n, len(lines))
	}
	recs := make([]records.Request, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return recs, lines
}

func TestDryRunRecords(t *testing.T) {
	wire := 57
	c := conv("trace_a", 0, cachebust.FirstTurnPrefix, "Sys <b>", "a & b", "c")
	c.Turns[0].WireISL = &wire
	b := newBuilder(t, PayloadOptions{Stream: true})
	recs, lines := dryRunRecords(t, []records.Conversation{c}, b, Shard{})
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Kind != "islkit.request" || r.ConversationID != "trace_a" || r.Turn != 0 || r.TargetISL != 100 ||
		r.ExpectedISL == nil || *r.ExpectedISL != 57 || r.Marker != ridA+"\n\n" || r.BenchmarkID != "bench" ||
		r.Landing.String() != "first_user_turn/prefix" || !r.DryRun || r.MaxTokens != 4 || r.Result != nil {
		t.Errorf("record 0: %s", lines[0])
	}
	if recs[1].Turn != 1 || recs[1].ExpectedISL != nil || recs[1].TargetISL != 101 {
		t.Errorf("record 1: %s", lines[1])
	}
	for i, l := range lines {
		testutil.ValidateSchema(t, "request.schema.json", l)
		// The embedded payload is the builder's exact bytes.
		built, _ := b.Build(&c, i, 0, nil)
		if !bytes.Contains(l, append(append([]byte(`"payload":`), built.Body...), '}')) {
			t.Errorf("line %d does not embed the body verbatim:\n%s\n%s", i, l, built.Body)
		}
	}
}

func TestAIPerfInputs(t *testing.T) {
	convs := []records.Conversation{conv("s0", 0, cachebust.None, "", "a", "b"), conv("s1", 1, cachebust.FirstTurnSuffix, "", "c")}
	var out bytes.Buffer
	n, err := DryRun(&out, convs, newBuilder(t, PayloadOptions{}), Shard{}, FormatAIPerfInputs)
	if err != nil || n != 3 {
		t.Fatalf("n %d, err %v", n, err)
	}
	var doc struct {
		Data []struct {
			SessionID string `json:"session_id"`
			Payloads  []body `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(doc.Data) != 2 || doc.Data[0].SessionID != "s0" || len(doc.Data[0].Payloads) != 2 ||
		doc.Data[1].SessionID != "s1" || len(doc.Data[1].Payloads) != 1 ||
		len(doc.Data[0].Payloads[1].Messages) != 3 || doc.Data[0].Payloads[1].Messages[1].Content != "reply 0" {
		t.Errorf("inputs.json: %s", out.String())
	}
}

func TestShards(t *testing.T) {
	var convs []records.Conversation
	for i := range 10 {
		convs = append(convs, conv(fmt.Sprintf("c%d", i), i, cachebust.FirstTurnPrefix, "", "x", "y"))
	}
	b := newBuilder(t, PayloadOptions{})
	seen := map[string]int{}
	for i := range 3 {
		recs, _ := dryRunRecords(t, convs, b, Shard{I: i, N: 3})
		for _, r := range recs {
			seen[fmt.Sprint(r.ConversationID, "/", r.Turn)]++
			seen["marker "+r.Marker]++
		}
	}
	if len(seen) != 30 { // 20 requests + 10 distinct markers
		t.Errorf("%d distinct keys: %v", len(seen), seen)
	}
	for k, n := range seen {
		if (strings.HasPrefix(k, "marker ") && n != 2) || (!strings.HasPrefix(k, "marker ") && n != 1) {
			t.Errorf("%s seen %d times", k, n)
		}
	}
	for _, bad := range []string{"3/3", "-1/2", "1/0", "a/b", "1/2/3", "1"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
}

func TestReadConversationsErrors(t *testing.T) {
	good := mustLine(t, conv("c", 0, cachebust.FirstTurnPrefix, "", "x"))
	wrongVersion := strings.Replace(good, `"schema_version":1`, `"schema_version":2`, 1)
	wrongLanding := strings.Replace(good, `"marker_landing":"first_user_turn/prefix"`, `"marker_landing":"shared_system_prompt/prefix"`, 1)
	cases := []struct{ in, want string }{
		{good + "\n{not json\n", "in.jsonl:2: invalid JSON"},
		{good + "\n\n" + wrongVersion + "\n", `in.jsonl:3: field "schema_version": unknown schema version 2`},
		{strings.Replace(good, `"islkit.conversation"`, `"islkit.probe"`, 1), `in.jsonl:1: field "kind"`},
		{strings.Replace(good, `"index":0,`, `"index":0,"surprise":1,`, 1), `in.jsonl:1: field "surprise": unknown field`},
		{wrongLanding, `in.jsonl:1: field "marker_landing"`},
		{strings.Replace(good, `"cache_bust":"first_turn_prefix"`, `"cache_bust":"middle"`, 1), "in.jsonl:1:"},
		{strings.Replace(good, `"turns":[`, `"turns":[],"x":[`, 1), "in.jsonl:1:"},
	}
	for _, c := range cases {
		_, err := ReadConversations(strings.NewReader(c.in), "in.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to contain %q", err, c.want)
		}
	}
	other := mustLine(t, conv("d", 1, cachebust.FirstTurnPrefix, "", "x"))
	got, err := ReadConversations(strings.NewReader(good+"\n"+other), "in.jsonl")
	if err != nil || len(got) != 2 || got[1].Turns[0].Text != "x" {
		t.Errorf("good input: %v %v", got, err)
	}
}

func mustLine(t testing.TB, c records.Conversation) string {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func FuzzDecodeConversation(f *testing.F) {
	f.Add([]byte(mustLine(f, conv("c", 0, cachebust.SystemSuffix, "s", "x", "y"))))
	f.Add([]byte(`{"kind":"islkit.conversation","schema_version":1,"turns":[{}]}`))
	f.Add([]byte("{\"id\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeConversation(jsonl.Line{File: "f", Num: 1, Data: data})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:1: ") {
				t.Errorf("error without position: %v", err)
			}
			return
		}
		// Whatever decodes must build.
		b, _ := NewBuilder(PayloadOptions{Model: "m"}, nil)
		for i := range c.Turns {
			if _, err := b.Build(&c, i, 0, nil); err != nil {
				t.Errorf("accepted conversation fails to build: %v", err)
			}
		}
	})
}

// --- live ---

func liveRecords(t testing.TB, out *bytes.Buffer) []records.Request {
	t.Helper()
	var recs []records.Request
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r records.Request
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestLiveRecordsWhatTheServerGot: each live record's payload is the body
// the server received and its usage the server's count of that body (the
// test server's counts are checked against the golden wire files in its
// own tests); turn 0 payloads are byte identical between dry run and live.
func TestLiveRecordsWhatTheServerGot(t *testing.T) {
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	received := map[string]int{}
	s := testserver.StartTest(t, testserver.Config{Model: src})
	s.Observe = func(body []byte, prompt int) {
		mu.Lock()
		received[string(body)] = prompt
		mu.Unlock()
	}
	var convs []records.Conversation
	for i, target := range cachebust.Targets() {
		sys := ""
		if i%2 == 1 {
			sys = "You are a careful assistant. <rules> & more"
		}
		convs = append(convs, conv(fmt.Sprintf("conv-%d", i), i, target, sys,
			"Summarise the history of the printing press in two sentences.", "Now in French, please.", "Thanks!"))
	}
	b := newBuilder(t, PayloadOptions{Stream: true, ExtraBody: `{"chat_template_kwargs":{"enable_thinking":false}}`})
	dry, dryLines := dryRunRecords(t, convs, b, Shard{})
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, convs, b, Config{URL: s.URL(), Concurrency: 3, Timeout: 10 * time.Second}, Wiring{})
	if err != nil || sum.Failed != 0 || sum.Requests != len(dry) {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	live := liveRecords(t, &out)
	if len(live) != len(dry) {
		t.Fatalf("%d live records, %d dry", len(live), len(dry))
	}
	byKey := map[string]records.Request{}
	for _, r := range live {
		byKey[fmt.Sprint(r.ConversationID, r.Turn)] = r
		testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
		if r.Result == nil || !r.Result.OK || r.Result.Usage == nil {
			t.Fatalf("live record: %+v", r)
		}
		if got, ok := received[string(r.Payload)]; !ok || r.Result.Usage.PromptTokens == nil || got != *r.Result.Usage.PromptTokens || got == 0 {
			t.Errorf("%s turn %d: record payload or usage is not what the server got (server counted %d, record %d)",
				r.ConversationID, r.Turn, got, r.Result.Usage.PromptTokens)
		}
		if r.Result.Usage.CompletionTokens != r.MaxTokens || r.Result.TTFTNs == nil || len(r.Result.ITLNs) != r.MaxTokens-1 ||
			r.Result.OutputText == "" || r.Result.FinishReason != "length" {
			t.Errorf("%s turn %d: result %+v", r.ConversationID, r.Turn, r.Result)
		}
	}
	for i, d := range dry {
		l := byKey[fmt.Sprint(d.ConversationID, d.Turn)]
		if l.Marker != d.Marker || l.Landing != d.Landing {
			t.Errorf("%s: live marker %q/%s, dry %q/%s", d.ConversationID, l.Marker, l.Landing, d.Marker, d.Landing)
		}
		if d.Turn == 0 && !bytes.Equal(l.Payload, d.Payload) {
			t.Errorf("%s turn 0: live payload differs from dry run\n%s\n%s", d.ConversationID, l.Payload, dryLines[i])
		}
		if d.Turn > 0 {
			// Live history carries the server's real reply, not compose's.
			if !bytes.Contains(l.Payload, []byte("lorem ipsum")) || bytes.Contains(l.Payload, []byte("reply 0")) {
				t.Errorf("%s turn %d: history lacks the real reply: %s", d.ConversationID, d.Turn, l.Payload)
			}
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
