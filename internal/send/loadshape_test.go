package send

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// gapStats are the mean, coefficient of variation and gaps of n slots.
func gapStats(a *arrivals, n int, unit func(float64) float64) (mean, cv float64, gaps []float64) {
	prev := unit(a.next())
	sum, sumSq := 0.0, 0.0
	for range n {
		at := unit(a.next())
		g := at - prev
		prev = at
		gaps = append(gaps, g)
		sum, sumSq = sum+g, sumSq+g*g
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(sumSq/float64(n)-mean*mean) / mean, gaps
}

// ks is the Kolmogorov–Smirnov statistic of sample xs against cdf.
func ks(xs []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	d, n := 0.0, float64(len(s))
	for i, x := range s {
		f := cdf(x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

// gammaCDF is the closed-form CDF of the gamma distribution of shape k and
// scale 1 for the shapes tested: erf(√x) at ½, the Erlang sum at whole k.
func gammaCDF(k float64) func(float64) float64 {
	if k == 0.5 {
		return func(x float64) float64 { return math.Erf(math.Sqrt(max(x, 0))) }
	}
	return func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		term, sum := 1.0, 1.0
		for i := 1; i < int(k); i++ {
			term *= x / float64(i)
			sum += term
		}
		return 1 - math.Exp(-x)*sum
	}
}

// TestGammaArrivals checks vLLM's --burstiness arrivals without the clock:
// gaps of mean 1/rate and coefficient of variation 1/√B, distributed as
// gamma(B, 1/(rate·B)) by a Kolmogorov–Smirnov test against the closed
// form CDF; from a fixed seed, so the figures are fixed and the bounds
// (about 3 standard errors; the KS bound is the 0.1 % critical value)
// catch a wrong process, not chance.
func TestGammaArrivals(t *testing.T) {
	const rate, n = 50.0, 20000
	ksCrit := 1.95 / math.Sqrt(n)
	for _, b := range []float64{0.5, 1, 2, 4} {
		a := newArrivals(arrivalOptions{rate: rate, dist: RateGamma, burstiness: b, seed: 7})
		if first := a.next(); first != 0 {
			t.Fatalf("B=%v: first slot at %v, want 0", b, first)
		}
		mean, cv, gaps := gapStats(a, n, func(s float64) float64 { return s })
		if math.Abs(mean*rate-1) > 3/math.Sqrt(n*b) || math.Abs(cv*math.Sqrt(b)-1) > 0.04 {
			t.Errorf("B=%v: mean gap %.4g s (want %.4g), cv %.3f (want %.3f)", b, mean, 1/rate, cv, 1/math.Sqrt(b))
		}
		for i := range gaps {
			gaps[i] *= rate * b // gamma(B, 1)
		}
		if d := ks(gaps, gammaCDF(b)); d > ksCrit {
			t.Errorf("B=%v: KS distance %.4f from gamma(%v, 1/(rate·%v)), over the 0.1%% bound %.4f", b, d, b, b, ksCrit)
		}
		// Poisson (exponential gaps) is what B=1 must be, and far from B=4.
		if b == 4 {
			if d := ks(gaps, gammaCDF(1)); d < 0.1 {
				t.Errorf("B=4 gaps pass for exponential (KS %.4f): the shape is not applied", d)
			}
		}
	}
	one := newArrivals(arrivalOptions{rate: rate, dist: RateGamma, burstiness: 2, seed: 1})
	two := newArrivals(arrivalOptions{rate: rate, dist: RateGamma, burstiness: 2, seed: 2})
	one.next()
	two.next()
	if one.next() == two.next() {
		t.Error("the seed does not change the gamma schedule")
	}
}

// TestRampArrivals checks --ramp-up with --rate without the clock: the
// rate rises linearly from 0, so by time t ≤ D there are rate·t²/(2D)
// slots and after D rate more each second; the process in operational
// time keeps its gaps (constant: exactly 1; Poisson and gamma: mean 1,
// cv 1/√B).
func TestRampArrivals(t *testing.T) {
	const rate, ramp = 100.0, 20 * time.Second
	d := ramp.Seconds()
	count := func(slots []float64, from, to float64) int {
		n := 0
		for _, s := range slots {
			if s >= from && s < to {
				n++
			}
		}
		return n
	}
	for _, tt := range []struct {
		dist string
		b    float64
	}{{RateConstant, 0}, {RatePoisson, 1}, {RateGamma, 0.5}, {RateGamma, 4}} {
		cv := 0.0
		if tt.dist != RateConstant {
			cv = 1 / math.Sqrt(tt.b)
		}
		a := newArrivals(arrivalOptions{rate: rate, dist: tt.dist, burstiness: tt.b, ramp: ramp, seed: 3})
		var slots []float64
		for range 8000 {
			slots = append(slots, a.next())
		}
		if slots[0] != 0 || !sort.Float64sAreSorted(slots) {
			t.Fatalf("%s: slots start at %v, sorted %v", tt.dist, slots[0], sort.Float64sAreSorted(slots))
		}
		// ∫ rate·t/D dt over the window; then the full rate.
		for _, w := range [][2]float64{{0, d / 2}, {d / 2, d}, {d, d + 40}} {
			lo, hi := w[0], w[1]
			want := rate * (min(hi, d)*min(hi, d) - lo*lo) / (2 * d)
			if hi > d {
				want = rate * (hi - max(lo, d))
			}
			// A renewal process's count has variance ≈ mean·cv²: 4 sd.
			if got := float64(count(slots, lo, hi)); math.Abs(got-want) > 4*cv*math.Sqrt(want)+1 {
				t.Errorf("%s B=%v: %v slots in [%v s, %v s), want %v", tt.dist, tt.b, got, lo, hi, want)
			}
		}
		// Back in operational time the gaps are the plain process's.
		op := newArrivals(arrivalOptions{rate: rate, dist: tt.dist, burstiness: tt.b, ramp: ramp, seed: 3})
		mean, gotCV, _ := gapStats(op, 7999, op.expected)
		if math.Abs(mean-1) > 0.05 || math.Abs(gotCV-cv) > 0.05 {
			t.Errorf("%s B=%v: operational gaps mean %.4f cv %.4f, want 1 and %.3f", tt.dist, tt.b, mean, gotCV, cv)
		}
	}
	// Constant arrivals are exact: slot n at Λ⁻¹(n).
	c := newArrivals(arrivalOptions{rate: rate, ramp: ramp})
	for n := range 4000 {
		if got := c.next(); math.Abs(c.expected(got)-float64(n)) > 1e-9 {
			t.Fatalf("constant slot %d at %v s: Λ = %v", n, got, c.expected(got))
		}
	}
}

// TestRampStart: without --rate, --ramp-up adds one session at even
// steps, from 1 at the start to --concurrency at D.
func TestRampStart(t *testing.T) {
	var got []time.Duration
	for k := range 5 {
		got = append(got, rampStart(k, 5, 4*time.Second))
	}
	if want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("ramp starts %v, want %v", got, want)
	}
	if rampStart(0, 1, time.Second) != 0 || rampStart(3, 8, 0) != 0 {
		t.Error("no ramp for one worker or no --ramp-up")
	}
}

func TestLoadShapeOptions(t *testing.T) {
	for _, tt := range []struct {
		o    LiveOptions
		want string
	}{
		{LiveOptions{Rate: 5, RateDistribution: RatePoisson, Burstiness: 2}, "--burstiness is the shape of --rate-distribution gamma"},
		{LiveOptions{Rate: 5, RateDistribution: RateGamma, Burstiness: -1}, "--burstiness -1"},
		{LiveOptions{Rate: 5, RateDistribution: "weibull"}, `--rate-distribution "weibull"`},
		{LiveOptions{Warmup: -1}, "--warmup -1"},
		{LiveOptions{RampUp: -time.Second}, "--ramp-up -1s"},
		{LiveOptions{Schedule: ScheduleTimestamps, RampUp: time.Second}, "drop --ramp-up"},
		{LiveOptions{Schedule: ScheduleTimestamps, Warmup: 2}, "drop --warmup"},
	} {
		tt.o.URL, tt.o.Timeout = "http://127.0.0.1:1", time.Second
		if err := tt.o.Validate(); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
	o := LiveOptions{URL: "http://127.0.0.1:1", Timeout: time.Second, Rate: 5, RateDistribution: RateGamma}
	if err := o.Validate(); err != nil || o.Burstiness != 1 {
		t.Errorf("gamma default burstiness: %v, %v (want 1)", err, o.Burstiness)
	}
	o = LiveOptions{URL: "http://127.0.0.1:1", Timeout: time.Second, Concurrency: 1, Warmup: 3, Requests: 8}
	if err := o.Validate(); err != nil {
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
	for _, o := range []LiveOptions{
		{Concurrency: 2},
		{Rate: 200, RateDistribution: RateGamma, Burstiness: 0.5, RampUp: 20 * time.Millisecond},
		{Concurrency: 3, RampUp: 20 * time.Millisecond},
	} {
		o.URL, o.Timeout, o.Warmup, o.Requests, o.Recycle = s.URL(), 10*time.Second, 3, 6, true
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(4, 2), newBuilder(t, PayloadOptions{Stream: true}), o)
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
		LiveOptions{URL: s.URL(), Concurrency: 1, Warmup: 3, Duration: 500 * time.Millisecond, Recycle: true,
			Timeout: 10 * time.Second, Grace: 10 * time.Second})
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
	for _, o := range []LiveOptions{
		{Rate: 2000, Requests: 20, Recycle: true},
		{Rate: 2000, Requests: 18, Warmup: 2, Recycle: true},
		{Rate: 2000, Concurrency: 8, Requests: 20, Recycle: true},
		{Rate: 2000, RateDistribution: RateGamma, Burstiness: 0.5, Requests: 20, Recycle: true},
		{Rate: 2000},
	} {
		o.URL, o.Timeout = s.URL(), time.Minute
		var out bytes.Buffer
		if _, err := Run(context.Background(), &out, dataset(3, 1), newBuilder(t, PayloadOptions{Stream: true}), o); err != nil {
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
