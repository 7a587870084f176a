package send

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

func TestLoadShapeOptions(t *testing.T) {
	for _, tt := range []struct {
		o    Config
		want string
	}{
		{Config{Rate: 5, RateDistribution: RatePoisson, Burstiness: 2}, "--burstiness is the shape of --rate-distribution gamma"},
		{Config{Rate: 5, RateDistribution: RateGamma, Burstiness: -1}, "--burstiness -1"},
		{Config{Rate: 5, RateDistribution: "weibull"}, `--rate-distribution "weibull"`},
		{Config{Warmup: -1}, "--warmup -1"},
		{Config{RampUp: -time.Second}, "--ramp-up -1s"},
		{Config{Schedule: ScheduleTimestamps, RampUp: time.Second}, "drop --ramp-up"},
		{Config{Schedule: ScheduleTimestamps, Warmup: 2}, "drop --warmup"},
	} {
		tt.o.URL, tt.o.Timeout = "http://127.0.0.1:1", time.Second
		if _, err := tt.o.Validate(); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
	o := Config{URL: "http://127.0.0.1:1", Timeout: time.Second, Rate: 5, RateDistribution: RateGamma}
	if v, err := o.Validate(); err != nil || v.Burstiness != 1 || o.Burstiness != 0 {
		t.Errorf("gamma default burstiness: %v, %v (want 1; the input's left at %v, want 0)", err, v.Burstiness, o.Burstiness)
	}
	o = Config{URL: "http://127.0.0.1:1", Timeout: time.Second, Concurrency: 1, Warmup: 3, Requests: 8}
	if _, err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.CheckDataset(dataset(5, 2)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("--warmup 3 and --requests 8")) {
		t.Errorf("warmup beyond one pass: %v", err)
	}
}

// TestWarmup sends 3 warmup requests then 6 measured ones: the first 3
// records by start are marked warmup, every measured request starts after
// the last warmup request ended, and every record (warmup or not) has its
// intended start and lag.
func TestWarmup(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	for _, o := range []Config{
		{Concurrency: 2},
		{Rate: 200, RateDistribution: RateGamma, Burstiness: 0.5, RampUp: 20 * time.Millisecond},
		{Concurrency: 3, RampUp: 20 * time.Millisecond},
	} {
		o.URL, o.Timeout, o.Warmup, o.Requests, o.Recycle = s.URL(), 10*time.Second, 3, 6, true
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(4, 2), newBuilder(t, PayloadOptions{Stream: true}), o, Wiring{})
		if err != nil || sum.Failed != 0 {
			t.Fatal(sum, err)
		}
		recs := liveRecords(t, &out)
		if len(recs) != 9 {
			t.Fatalf("%+v: %d records, want 9", o, len(recs))
		}
		sort.Slice(recs, func(i, j int) bool { return recs[i].Result.StartNs < recs[j].Result.StartNs })
		var warmEnd int64
		for i, r := range recs {
			res := r.Result
			if r.Warmup != (i < 3) {
				t.Errorf("%+v: record %d by start: warmup %v", o, i, r.Warmup)
			}
			if r.Warmup {
				warmEnd = max(warmEnd, res.StartNs+res.LatencyNs)
			} else if res.StartNs < warmEnd {
				t.Errorf("%+v: measured request %d started %v before the warmup ended", o, i, time.Duration(warmEnd-res.StartNs))
			}
			if res.ScheduledNs == nil || res.ScheduleLagNs == nil || *res.ScheduleLagNs != res.StartNs-*res.ScheduledNs {
				t.Errorf("%+v: record %d: scheduled %v lag %v start %d", o, i, res.ScheduledNs, res.ScheduleLagNs, res.StartNs)
			}
			if res.SizingNs != nil {
				t.Errorf("%+v: record %d: sizing_ns %d without --exact", o, i, *res.SizingNs)
			}
			testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
		}
	}
}

// TestWarmupDuration: --duration counts the measured requests' time, from
// the end of the warmup: three warmup requests of 300 ms each, one after
// the other, outlast a 500 ms --duration, and measured requests still go.
func TestWarmupDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1.5 s run")
	}
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, TTFT: 300 * time.Millisecond})
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(4, 1), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 1, Warmup: 3, Duration: 500 * time.Millisecond, Recycle: true, Timeout: 10 * time.Second, Grace: 10 * time.Second}, Wiring{})
	if err != nil || sum.Failed != 0 || sum.Cancelled != 0 {
		t.Fatal(sum, err)
	}
	warm, measured := 0, 0
	for _, r := range liveRecords(t, &out) {
		if r.Warmup {
			warm++
		} else {
			measured++
		}
	}
	// 500 ms of 300 ms requests: the first at once, the second at 300 ms.
	if warm != 3 || measured < 1 || measured > 2 {
		t.Errorf("%d warmup and %d measured requests, want 3 and 1 or 2", warm, measured)
	}
}

// TestRateSendsSessionsInOrder: under --rate the sessions go out in
// dataset order, pass after pass, whatever the number of workers waiting
// for a slot: 20 requests over 3 conversations are passes 0 to 6 of them,
// each (conversation, pass) once, also with a warmup and under
// --concurrency, and a dataset sent once is sent whole. (Workers used to
// take a session before waiting for their slot: with 4096 rate-only
// workers a run of 20 requests sent passes in the thousands.)
func TestRateSendsSessionsInOrder(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	for _, o := range []Config{
		{Rate: 2000, Requests: 20, Recycle: true},
		{Rate: 2000, Requests: 18, Warmup: 2, Recycle: true},
		{Rate: 2000, Concurrency: 8, Requests: 20, Recycle: true},
		{Rate: 2000, RateDistribution: RateGamma, Burstiness: 0.5, Requests: 20, Recycle: true},
		{Rate: 2000},
	} {
		o.URL, o.Timeout = s.URL(), time.Minute
		var out bytes.Buffer
		if _, err := Run(context.Background(), &out, dataset(3, 1), newBuilder(t, PayloadOptions{Stream: true}), o, Wiring{}); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		n := 20
		if !o.Recycle {
			n = 3
		}
		for i := range n {
			want[fmt.Sprintf("c%03d/%d", i%3, i/3)] = true
		}
		got := map[string]bool{}
		for _, r := range liveRecords(t, &out) {
			k := fmt.Sprintf("%s/%d", r.ConversationID, r.Pass)
			if got[k] || !want[k] {
				t.Errorf("%+v: sent %s (twice, or beyond the first %d sessions)", o, k, n)
			}
			got[k] = true
		}
		if len(got) != n {
			t.Errorf("%+v: %d sessions sent, want %d", o, len(got), n)
		}
	}
}
