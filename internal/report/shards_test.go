package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

// shardRunRecord is a one-pass run record of shard I/N.
func shardRunRecord(shard, started, startAt string, turns int) records.Run {
	return records.Run{Kind: records.KindRun, SchemaVersion: 1, Tool: "send", Version: "v", Started: started, StartAt: startAt,
		CommandLine: []string{"--shard", "env/2"}, URL: "http://h", Endpoint: "chat", Stream: true, Concurrency: 1,
		Shard: shard, Turns: turns, Conversations: 4}
}

func withLag(l *Live, lagMs int64) *Live {
	l.ScheduleLagNs = i64(lagMs * msNs)
	return l
}

// TestShardsMerged: two shards' outputs, each after its run record. Hand
// computed (t0 is --start-at, 2025-06-15T15:06:40Z): shard 0's first
// request (a warmup one) at 3 ms, shard 1's at 12 ms: start skew 9 ms,
// late 3 and 12 ms; run records started 1 and 4.2 ms after t0: 3.2 ms.
// Shard 0: 2 of 2 turns over 5..210 ms, 2/0.205 s = 9.7561 req/s, lags
// 1 ms (not saturated); shard 1: 3 of 3 turns (one failed) over
// 12..140 ms, 2/0.128 s = 15.625 req/s, lags 20 ms > 5 ms: saturated.
func TestShardsMerged(t *testing.T) {
	at := "2025-06-15T15:06:40Z"
	if ts, _ := time.Parse(time.RFC3339, at); ts.UnixNano() != t0 {
		t.Fatalf("t0 is %v", time.Unix(0, t0).UTC())
	}
	a := NewAccumulator()
	a.AddRun(shardRunRecord("0/2", "2025-06-15T15:06:40.001Z", at, 2))
	a.AddRequest(Request{Warmup: true, Live: live(3, 1, 1, nil, 1, 1)})
	a.AddRequest(Request{ISL: records.ISL{}, Live: withLag(live(5, 100, 10, nil, 10, 5), 1)})
	a.AddRequest(Request{Live: withLag(live(110, 100, 10, nil, 10, 5), 1)})
	a.AddRun(shardRunRecord("1/2", "2025-06-15T15:06:40.0042Z", at, 3))
	a.AddRequest(Request{Live: withLag(live(12, 50, 10, nil, 10, 5), 20)})
	a.AddRequest(Request{Live: withLag(live(70, 50, 10, nil, 10, 5), 20)})
	a.AddRequest(Request{Live: withLag(failed(130, 10, records.ErrHTTP5xx), 20)})
	r := a.Report()
	s := r.Shards
	if s == nil {
		t.Fatal("no shards section")
	}
	near := func(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }
	if s.N != 2 || len(s.Shards) != 2 || s.Requests != 5 || s.Complete == nil || !*s.Complete || s.StartAt != at ||
		!near(s.StartSkewMs, 9) || !near(s.StartedSkewMs, 3.2) || !s.Together || len(s.Missing)+len(s.Repeated) != 0 {
		t.Errorf("shards: %+v", s)
	}
	s0, s1 := s.Shards[0], s.Shards[1]
	if s0.Shard != "0/2" || s0.Requests != 2 || s0.Turns != 2 || !near(s0.FirstStartMs, 0) || !near(s0.LateMs, 3) ||
		math.Abs(s0.RequestThroughput-2/0.205) > 1e-9 || s0.Client == nil || s0.Client.Saturated {
		t.Errorf("shard 0: %+v", s0)
	}
	if s1.Shard != "1/2" || s1.Requests != 3 || s1.Succeeded != 2 || s1.Failed != 1 || !near(s1.FirstStartMs, 9) || !near(s1.LateMs, 12) ||
		s1.RequestThroughput != 15.625 || s1.Client == nil || !s1.Client.Saturated {
		t.Errorf("shard 1: %+v", s1)
	}
	if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0], "shard 1/2: the client was saturated") {
		t.Errorf("problems: %q", s.Problems)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var text, page bytes.Buffer
	if err := a.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shards: 2 of 2, 5 requests, complete: every turn of every shard, each once",
		"start skew: first requests within 9.0 ms (limit 1000 ms; run records' started within 3.2 ms), --start-at " + at, "SATURATED"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := a.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>"+TitleShards+"</h2>") || !strings.Contains(page.String(), "<td>1/2</td><td>3</td><td>3</td>") {
		t.Errorf("HTML report lacks the shards section")
	}
}

// TestShardsProblems: a request before any run record, shard 1 of 3
// missing, shard 2 short of its turns, first requests 50 ms apart with
// --max-start-skew 10ms: incomplete, not together, each said.
func TestShardsProblems(t *testing.T) {
	a := NewAccumulatorWith(Options{StartSkewLimit: 10 * time.Millisecond})
	a.AddRequest(Request{Live: live(0, 1, 1, nil, 1, 1)})
	a.AddRun(shardRunRecord("0/3", "2025-06-15T15:06:40Z", "", 1))
	a.AddRequest(Request{Live: live(0, 10, 1, nil, 1, 1)})
	a.AddRun(shardRunRecord("2/3", "2025-06-15T15:06:40Z", "", 2))
	a.AddRequest(Request{Live: live(50, 10, 1, nil, 1, 1)})
	s := a.Report().Shards
	if s == nil || s.Complete == nil || *s.Complete || s.Together || s.Unattributed != 1 || len(s.Missing) != 1 || s.Missing[0] != 1 {
		t.Fatalf("shards: %+v", s)
	}
	got := strings.Join(s.Problems, "\n")
	for _, want := range []string{"1 requests come before any run record", "shards missing: 1 of 3", "shard 2/3 has 1 requests of its 2 turns",
		"first requests span 50.0 ms > 10ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	// Shards of two compose runs, and a request in the wrong shard's
	// output: conversation 4 is shard 0's of 2, not shard 1's.
	d := NewAccumulator()
	d.AddRun(shardRunRecord("0/2", "2025-06-15T15:06:40Z", "", 1))
	d.AddRequest(Request{BenchmarkID: "bench-a", ConversationIndex: 2, Live: live(0, 10, 1, nil, 1, 1)})
	d.AddRun(shardRunRecord("1/2", "2025-06-15T15:06:40Z", "", 1))
	d.AddRequest(Request{BenchmarkID: "bench-b", ConversationIndex: 4, Live: live(0, 10, 1, nil, 1, 1)})
	s = d.Report().Shards
	got = strings.Join(s.Problems, "\n")
	for _, want := range []string{"different compose runs (benchmark ids bench-a, bench-b)", "shard 1/2 holds 1 requests of conversations not in it (index mod 2 is not 1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if s.Complete == nil || *s.Complete {
		t.Errorf("complete %v, want false", s.Complete)
	}
	// A --requests run: completeness cannot be known.
	b := NewAccumulator()
	r := shardRunRecord("0/1", "2025-06-15T15:06:40Z", "", 5)
	r.Requests = 3
	b.AddRun(r)
	if s := b.Report().Shards; s == nil || s.Complete != nil {
		t.Errorf("a --requests run: complete %v, want unknown", s.Complete)
	}
	// No run names a shard: no section.
	c := NewAccumulator()
	c.AddRun(shardRunRecord("", "2025-06-15T15:06:40Z", "", 5))
	if c.Report().Shards != nil {
		t.Error("a shards section without shards")
	}
}

// FuzzShards: any run record's shard and any request times give a
// check without a panic, whose missing shards are below N and never
// more than the conversations the runs name.
func FuzzShards(f *testing.F) {
	f.Add("0/2", "1/2", 4, int64(0), int64(5), "2025-06-15T15:06:40Z")
	f.Add("5/2", "-1/2", 4, int64(-1), int64(math.MaxInt64), "")
	f.Add("0/1000000000", "x/y", 0, int64(math.MinInt64), int64(1), "not a time")
	f.Fuzz(func(t *testing.T, a, b string, convs int, start, lat int64, at string) {
		acc := NewAccumulator()
		for _, sh := range []string{a, b} {
			r := shardRunRecord(sh, at, at, 3)
			r.Conversations = convs
			acc.AddRun(r)
			acc.AddRequest(Request{Live: &Live{StartNs: start, LatencyNs: lat, OK: true}})
		}
		s := acc.Report().Shards
		if s == nil {
			return
		}
		if len(s.Missing) > max(convs, 1) {
			t.Fatalf("%d missing shards for %d conversations", len(s.Missing), convs)
		}
		for _, m := range s.Missing {
			if m < 0 || m >= s.N {
				t.Fatalf("missing shard %d of %d", m, s.N)
			}
		}
	})
}
