package send

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// starvedPoster answers at once but reports each request as started 20 ms
// after send handed it over: what a client whose goroutines wait for a CPU
// looks like, without depending on real starvation.
type starvedPoster struct{}

func (starvedPoster) do(context.Context, time.Duration, []byte) records.Result {
	return records.Result{StartNs: time.Now().Add(20 * time.Millisecond).UnixNano(), LatencyNs: 1000, Status: 200, OK: true, Stream: true}
}

// busyClock is a CPU clock on which every core is busy all the time: each
// reading is 200 ms of wall time later, with GOMAXPROCS times that of CPU.
func busyClock() *cpuClock {
	var mu sync.Mutex
	var wall time.Duration
	cores := time.Duration(runtime.GOMAXPROCS(0))
	return &cpuClock{
		wall: func() time.Duration { mu.Lock(); defer mu.Unlock(); wall += 200 * time.Millisecond; return wall },
		cpu:  func() (time.Duration, bool) { mu.Lock(); defer mu.Unlock(); return wall * cores, true },
	}
}

// TestStarvedClientFlagged: a run whose requests go out 20 ms late, and
// one whose CPU is all busy, are each flagged saturated, naming the cause;
// the records carry the figures measure reads; warmup requests (whose lag
// is as bad) are not counted.
func TestStarvedClientFlagged(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	run := func(o Config, wr Wiring) (Summary, []records.Request) {
		t.Helper()
		o.URL, o.Timeout, o.Requests, o.Recycle = s.URL(), 10*time.Second, 20, true
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(3, 1), newBuilder(t, PayloadOptions{Stream: true}), o, wr)
		if err != nil {
			t.Fatal(err)
		}
		return sum, liveRecords(t, &out)
	}
	sum, recs := run(Config{Concurrency: 4, Warmup: 2}, Wiring{post: starvedPoster{}})
	c := sum.Client
	if c == nil || !c.Saturated || c.Requests != 20 || *c.LagP50Ms < 20 || !strings.Contains(c.Warning(), "schedule lag p99") ||
		!strings.Contains(c.Warning(), "> 5ms: requests went out late") || !strings.Contains(c.Warning(), "the latencies include client time") {
		t.Fatalf("20 ms late: verdict %+v %q", c, c.Warning())
	}
	if len(recs) != 22 {
		t.Fatalf("%d records, want 22", len(recs))
	}
	for _, r := range recs {
		if r.Result.ScheduleLagNs == nil || *r.Result.ScheduleLagNs < int64(20*time.Millisecond) {
			t.Fatalf("record lag %v, want ≥ 20 ms", r.Result.ScheduleLagNs)
		}
	}
	// measure's verdict over the same records is send's.
	sm := report.NewSummary()
	for _, r := range recs {
		sm.AddRequest(report.Request{Warmup: r.Warmup, Live: &report.Live{StartNs: r.Result.StartNs, LatencyNs: r.Result.LatencyNs,
			OK: true, ScheduleLagNs: r.Result.ScheduleLagNs, ClientCPU: r.Result.ClientCPU}})
	}
	if mc := sm.Report().Performance.Client; mc == nil || mc.Warning() != c.Warning() {
		t.Errorf("measure's verdict %+v, send's %q", mc, c.Warning())
	}

	sum, recs = run(Config{Concurrency: 2, ClientLimits: report.ClientLimits{LagLimit: time.Hour}}, Wiring{cpuClock: busyClock()})
	if c := sum.Client; c == nil || !c.Saturated || c.CPUP99 == nil || *c.CPUP99 != 1 || len(c.Reasons) != 1 ||
		!strings.Contains(c.Reasons[0], "client CPU p99 100% of its cores >= 90%") {
		t.Fatalf("busy CPU: verdict %+v", c)
	}
	for _, r := range recs {
		if r.Result.ClientCPU == nil || *r.Result.ClientCPU != 1 {
			t.Fatalf("record client_cpu %v, want 1", r.Result.ClientCPU)
		}
		testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
	}
}

// TestCPUMeter: the figure is the CPU over the wall time of the last
// window of at least 100 ms, per core, and none before the first.
func TestCPUMeter(t *testing.T) {
	var wall, cpu time.Duration
	cores := time.Duration(runtime.GOMAXPROCS(0))
	m := newCPUMeter(&cpuClock{wall: func() time.Duration { return wall }, cpu: func() (time.Duration, bool) { return cpu, true }})
	wall, cpu = 50*time.Millisecond, 50*time.Millisecond*cores
	if _, ok := m.sample(); ok {
		t.Error("a figure before 100 ms")
	}
	wall, cpu = 200*time.Millisecond, 50*time.Millisecond*cores // a quarter of the cores over [0, 200 ms)
	if v, ok := m.sample(); !ok || v != 0.25 {
		t.Errorf("after 200 ms: %v %v, want 0.25", v, ok)
	}
	wall, cpu = 250*time.Millisecond, 100*time.Millisecond*cores // window not over: the last figure stays
	if v, _ := m.sample(); v != 0.25 {
		t.Errorf("within the window: %v, want 0.25", v)
	}
	wall, cpu = 400*time.Millisecond, 250*time.Millisecond*cores // 200 ms of CPU per core in 200 ms
	if v, _ := m.sample(); v != 1 {
		t.Errorf("busy window: %v, want 1", v)
	}
	if off := newCPUMeter(&cpuClock{wall: func() time.Duration { return 0 }, cpu: func() (time.Duration, bool) { return 0, false }}); off.off != true {
		t.Error("an unmeasurable CPU clock should turn the meter off")
	}
}

// fixedNow is the time on a clock that never moves, and calmPoster a client that
// starts each request at that instant: no lag, whatever the machine does.
var fixedNow = time.Unix(1_700_000_000, 0)

type calmPoster struct{}

func (calmPoster) do(context.Context, time.Duration, []byte) records.Result {
	return records.Result{StartNs: fixedNow.UnixNano(), LatencyNs: 1000, Status: 200, OK: true, Stream: true}
}

// idleClock is a CPU clock at a tenth of one core.
func idleClock() *cpuClock {
	var mu sync.Mutex
	var wall time.Duration
	return &cpuClock{
		wall: func() time.Duration { mu.Lock(); defer mu.Unlock(); wall += 200 * time.Millisecond; return wall },
		cpu:  func() (time.Duration, bool) { mu.Lock(); defer mu.Unlock(); return wall / 10, true },
	}
}

// TestCalmClientNotFlagged: a run whose requests start the instant their
// workers are ready, on a fake clock, with little CPU, is not flagged.
func TestCalmClientNotFlagged(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	var out bytes.Buffer
	sum, err := Run(context.Background(), &out, dataset(3, 2), newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 3, Requests: 30, Recycle: true, Timeout: 10 * time.Second}, Wiring{post: calmPoster{}, clock: func() time.Time { return fixedNow }, cpuClock: idleClock()})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Client
	if c == nil || c.Saturated || c.Warning() != "" || c.Requests != 30 || *c.LagP99Ms != 0 || c.CPUP99 == nil || *c.CPUP99 >= 0.9 {
		t.Errorf("calm run: %+v", c)
	}
	for _, r := range liveRecords(t, &out) {
		if *r.Result.ScheduleLagNs != 0 {
			t.Errorf("lag %d, want 0", *r.Result.ScheduleLagNs)
		}
	}
}

// slowPoster takes d to answer each request, started the moment it is
// handed over: a client that never falls behind, against a slow server.
type slowPoster struct{ d time.Duration }

func (p slowPoster) do(context.Context, time.Duration, []byte) records.Result {
	start := time.Now()
	time.Sleep(p.d)
	return records.Result{StartNs: start.UnixNano(), LatencyNs: int64(p.d), Status: 200, OK: true, Stream: true}
}

// TestScheduleWaitNotSaturation: requests held back by the schedule's own
// constraints go out late, but not by the client's fault: --rate 100
// --concurrency 1 against 60 ms requests (slot k is due at 10k ms, sent
// at 60k ms), and --warmup 3 --concurrency 2 (a measured request waits for
// the last warmup request to end). Their records carry the wait as
// queue_ns, and the verdict is a note that says what it is, not client
// saturation (issue 27 item 5: both were reported as a saturated client);
// measure's verdict over the records is the same.
func TestScheduleWaitNotSaturation(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	lim := report.ClientLimits{LagLimit: 40 * time.Millisecond}
	for name, o := range map[string]Config{
		"rate held back by concurrency": {Rate: 100, Concurrency: 1, Requests: 8},
		"warmup barrier":                {Warmup: 3, Concurrency: 2, Requests: 4},
	} {
		o.URL, o.Timeout, o.Recycle, o.ClientLimits = s.URL(), 10*time.Second, true, lim
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(3, 1), newBuilder(t, PayloadOptions{Stream: true}), o,
			Wiring{post: slowPoster{60 * time.Millisecond}, cpuClock: idleClock()})
		if err != nil {
			t.Fatal(err)
		}
		c := sum.Client
		if c == nil || c.Saturated || *c.LagP99Ms < 50 || c.QueueP99Ms == nil || *c.OwnLagP99Ms > 40 ||
			!strings.Contains(c.Note(), "requests waited for a free worker") {
			t.Errorf("%s: verdict %+v, warning %q, note %q; want a note on the wait, no saturation", name, c, c.Warning(), c.Note())
			continue
		}
		sm := report.NewSummaryWith(report.Options{Client: lim})
		queued := 0
		for _, r := range liveRecords(t, &out) {
			res := r.Result
			if res.QueueNs != nil {
				queued++
				if *res.QueueNs > *res.ScheduleLagNs || *res.ScheduleLagNs-*res.QueueNs > int64(40*time.Millisecond) {
					t.Errorf("%s: queue %d ns of a lag of %d ns", name, *res.QueueNs, *res.ScheduleLagNs)
				}
				testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
			}
			sm.AddRequest(report.Request{Warmup: r.Warmup, Live: &report.Live{StartNs: res.StartNs, LatencyNs: res.LatencyNs,
				OK: true, ScheduleLagNs: res.ScheduleLagNs, QueueNs: res.QueueNs, ClientCPU: res.ClientCPU}})
		}
		if queued == 0 {
			t.Errorf("%s: no record with queue_ns", name)
		}
		if mc := sm.Report().Performance.Client; mc == nil || mc.Saturated || mc.Note() != c.Note() {
			t.Errorf("%s: measure's verdict %+v, send's note %q", name, mc, c.Note())
		}
	}
}
