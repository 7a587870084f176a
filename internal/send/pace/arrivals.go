package pace

import (
	"math"
	"math/rand/v2"
	"time"
)

// Rate distributions (--rate-distribution).
const (
	RateConstant = "constant"
	RatePoisson  = "poisson"
	RateGamma    = "gamma" // vLLM's --burstiness: gamma gaps of shape Burstiness
)

// ArrivalOptions describe the arrival process of --rate.
type ArrivalOptions struct {
	Rate float64 // requests per second
	// Dist is RateConstant (or ""), RatePoisson or RateGamma; Burstiness
	// is the gamma shape.
	Dist       string
	Burstiness float64
	// Ramp is --ramp-up: the rate rises linearly from 0 to Rate over it.
	Ramp time.Duration
	Seed uint64
}

// Arrivals is the arrival process of --rate: slot offsets in seconds from
// the start, from a seeded generator, so a run's schedule is reproducible.
//
// The process is drawn in operational time, where the rate is 1: slot n
// sits at u_n = n (constant), or u_n is the sum of n independent gaps
// with mean 1: exponential (Poisson) or gamma with shape B and scale 1/B
// (vLLM's --burstiness B: B = 1 is Poisson, B < 1 burstier, B > 1 more
// even; coefficient of variation 1/√B). The slot's time is Λ⁻¹(u_n), with
// Λ(t) the expected number of requests by t: rate·t without a ramp-up;
// with --ramp-up D the rate rises linearly from 0 to rate over D, so
// Λ(t) = rate·t²/(2D) up to D and rate·D/2 + rate·(t−D) after. Without a
// ramp this is vLLM's gamma(shape B, scale 1/(rate·B)) inter-arrivals.
type Arrivals struct {
	o   ArrivalOptions
	rng *rand.Rand
	u   float64 // operational time of the next slot
	n   int     // slots handed out
}

func NewArrivals(o ArrivalOptions) *Arrivals {
	return &Arrivals{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x15c7))}
}

// Next returns the next slot's offset in seconds; the first is 0.
func (a *Arrivals) Next() float64 {
	u := a.u
	a.n++
	switch a.o.Dist {
	case RatePoisson:
		a.u += a.rng.ExpFloat64()
	case RateGamma:
		a.u += gamma(a.rng, a.o.Burstiness) / a.o.Burstiness
	default:
		a.u = float64(a.n)
	}
	return a.at(u)
}

// at is Λ⁻¹(u): the time in seconds by which u requests are expected.
func (a *Arrivals) at(u float64) float64 {
	r, d := a.o.Rate, a.o.Ramp.Seconds()
	if d <= 0 {
		return u / r
	}
	if half := r * d / 2; u > half {
		return d + (u-half)/r
	}
	return math.Sqrt(2 * d * u / r)
}

// expected is Λ(t), the inverse of at.
func (a *Arrivals) expected(t float64) float64 {
	r, d := a.o.Rate, a.o.Ramp.Seconds()
	switch {
	case d <= 0:
		return r * t
	case t <= d:
		return r * t * t / (2 * d)
	}
	return r*d/2 + r*(t-d)
}

// gamma draws from the gamma distribution of shape k and scale 1
// (Marsaglia and Tsang, "A simple method for generating gamma variables",
// 2000; shape < 1 through Gamma(k+1)·U^(1/k)).
func gamma(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// RampStart is when worker k of c starts with --ramp-up d and no --rate:
// concurrency rises by one at even steps from 1 at the start to c at d
// (AIPerf's --concurrency-ramp-duration).
func RampStart(k, c int, d time.Duration) time.Duration {
	if c <= 1 || d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * float64(k) / float64(c-1))
}
