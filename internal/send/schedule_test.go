package send

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// traced is dataset(n, 1) with trace timestamps ms[i].
func traced(ms ...float64) []records.Conversation {
	convs := dataset(len(ms), 1)
	for i := range convs {
		ts := ms[i]
		convs[i].Trace = &records.TraceRef{Line: i + 1, TimestampMs: &ts, HashIDs: []int64{int64(i)}, BlockSize: 512}
	}
	return convs
}

func TestScheduleOptions(t *testing.T) {
	for _, tt := range []struct {
		o    Config
		want string
	}{
		{Config{Speedup: 2}, "--speedup needs --schedule timestamps"},
		{Config{Schedule: "poisson"}, `--schedule "poisson"`},
		{Config{Schedule: ScheduleTimestamps, Speedup: -1}, "--speedup -1"},
		{Config{Schedule: ScheduleTimestamps, Rate: 5}, "drop --rate"},
		{Config{Schedule: ScheduleTimestamps, Recycle: true, Requests: 3}, "drop --recycle"},
	} {
		tt.o.URL, tt.o.Timeout = "http://127.0.0.1:1", time.Second
		if _, err := tt.o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
	o := Config{URL: "http://127.0.0.1:1", Timeout: time.Second, Schedule: ScheduleTimestamps}
	if v, err := o.Validate(); err != nil || v.Speedup != 1 || v.Concurrency != 0 || o.Speedup != 0 {
		t.Errorf("defaults: %v, speedup %v, concurrency %d (want 1, and no cap); the input's speedup %v (want 0)", err, v.Speedup, v.Concurrency, o.Speedup)
	}
	if err := o.CheckDataset(dataset(2, 1)); err == nil || !strings.Contains(err.Error(), "conversation c000 has no trace timestamp") {
		t.Errorf("untimed dataset: %v", err)
	}
}

// TestScheduleTimestamps replays three rows 0, 200 and 600 ms apart at
// speedup 2: each request is due 0, 100 and 300 ms after the first and
// records how late it went out.
func TestScheduleTimestamps(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	var out bytes.Buffer
	_, err := Run(context.Background(), &out, traced(5000, 5200, 5600), newBuilder(t, PayloadOptions{}),
		Config{URL: s.URL(), Schedule: ScheduleTimestamps, Speedup: 2, Timeout: 5 * time.Second}, Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	recs := liveRecords(t, &out)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].ConversationIndex < recs[j].ConversationIndex })
	first := *recs[0].Result.ScheduledNs
	for i, want := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond} {
		r := recs[i].Result
		if r.ScheduledNs == nil || r.ScheduleLagNs == nil {
			t.Fatalf("record %d: no schedule", i)
		}
		if got := time.Duration(*r.ScheduledNs - first); got != want {
			t.Errorf("record %d due %v after the first, want %v", i, got, want)
		}
		testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, recs[i]))
		if *r.ScheduleLagNs != r.StartNs-*r.ScheduledNs || *r.ScheduleLagNs < 0 {
			t.Errorf("record %d: schedule_lag_ns %d, start %d, due %d", i, *r.ScheduleLagNs, r.StartNs, *r.ScheduledNs)
		}
	}
}
