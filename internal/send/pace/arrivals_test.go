package pace

import (
	"math"
	"slices"
	"sort"
	"testing"
	"time"
)

// gapStats are the mean, coefficient of variation and gaps of n slots.
func gapStats(a *Arrivals, n int, unit func(float64) float64) (mean, cv float64, gaps []float64) {
	prev := unit(a.Next())
	sum, sumSq := 0.0, 0.0
	for range n {
		at := unit(a.Next())
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
		a := NewArrivals(ArrivalOptions{Rate: rate, Dist: RateGamma, Burstiness: b, Seed: 7})
		if first := a.Next(); first != 0 {
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
	one := NewArrivals(ArrivalOptions{Rate: rate, Dist: RateGamma, Burstiness: 2, Seed: 1})
	two := NewArrivals(ArrivalOptions{Rate: rate, Dist: RateGamma, Burstiness: 2, Seed: 2})
	one.Next()
	two.Next()
	if one.Next() == two.Next() {
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
		a := NewArrivals(ArrivalOptions{Rate: rate, Dist: tt.dist, Burstiness: tt.b, Ramp: ramp, Seed: 3})
		var slots []float64
		for range 8000 {
			slots = append(slots, a.Next())
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
		op := NewArrivals(ArrivalOptions{Rate: rate, Dist: tt.dist, Burstiness: tt.b, Ramp: ramp, Seed: 3})
		mean, gotCV, _ := gapStats(op, 7999, op.expected)
		if math.Abs(mean-1) > 0.05 || math.Abs(gotCV-cv) > 0.05 {
			t.Errorf("%s B=%v: operational gaps mean %.4f cv %.4f, want 1 and %.3f", tt.dist, tt.b, mean, gotCV, cv)
		}
	}
	// Constant arrivals are exact: slot n at Λ⁻¹(n).
	c := NewArrivals(ArrivalOptions{Rate: rate, Ramp: ramp})
	for n := range 4000 {
		if got := c.Next(); math.Abs(c.expected(got)-float64(n)) > 1e-9 {
			t.Fatalf("constant slot %d at %v s: Λ = %v", n, got, c.expected(got))
		}
	}
}

// TestRampStart: without --rate, --ramp-up adds one session at even
// steps, from 1 at the start to --concurrency at D.
func TestRampStart(t *testing.T) {
	var got []time.Duration
	for k := range 5 {
		got = append(got, RampStart(k, 5, 4*time.Second))
	}
	if want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("ramp starts %v, want %v", got, want)
	}
	if RampStart(0, 1, time.Second) != 0 || RampStart(3, 8, 0) != 0 {
		t.Error("no ramp for one worker or no --ramp-up")
	}
}

// TestArrivals checks the arrival process --rate schedules, without the
// clock: constant slots exactly 1/rate apart; Poisson gaps with mean 1/rate
// and a coefficient of variation of 1, from a fixed seed (so the figures
// are fixed too: the bounds are for a wrong process, not for chance).
func TestArrivals(t *testing.T) {
	const rate, n = 200.0, 20000
	c := NewArrivals(ArrivalOptions{Rate: rate, Seed: 1})
	for i := range 1000 {
		if got, want := c.Next(), float64(i)/rate; math.Abs(got-want) > 1e-12 {
			t.Fatalf("constant slot %d at %v s, want %v", i, got, want)
		}
	}
	p := NewArrivals(ArrivalOptions{Rate: rate, Dist: RatePoisson, Seed: 1})
	if first := p.Next(); first != 0 {
		t.Fatalf("first Poisson slot at %v, want 0", first)
	}
	prev, sum, sumSq := 0.0, 0.0, 0.0
	for range n {
		at := p.Next()
		gap := at - prev
		if gap < 0 {
			t.Fatalf("slots out of order: %v after %v", at, prev)
		}
		prev, sum, sumSq = at, sum+gap, sumSq+gap*gap
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	if math.Abs(mean*rate-1) > 0.03 || math.Abs(sd/mean-1) > 0.03 {
		t.Errorf("Poisson gaps: mean %.3g s (want %.3g), cv %.3f (want 1)", mean, 1/rate, sd/mean)
	}
	one, two := NewArrivals(ArrivalOptions{Rate: rate, Dist: RatePoisson, Seed: 1}), NewArrivals(ArrivalOptions{Rate: rate, Dist: RatePoisson, Seed: 2})
	one.Next()
	two.Next()
	if one.Next() == two.Next() {
		t.Error("the seed does not change the schedule")
	}
}
