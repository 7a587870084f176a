package compose

import (
	"math"
	"math/rand/v2"
)

// positiveNormal is AIPerf's sample_positive_normal_integer (§4.3): with no
// spread the mean rounded half-to-even (at least 1); otherwise a normal draw
// rejected while negative (at most 10,000 tries, then clamped), rounded up,
// at least 1. Unlike AIPerf the stddev is not truncated to an integer.
func positiveNormal(rng *rand.Rand, mean, stddev float64) int {
	if stddev <= 0 {
		return max(1, int(math.RoundToEven(mean)))
	}
	x := mean + stddev*rng.NormFloat64()
	for i := 0; x < 0 && i < 10000; i++ {
		x = mean + stddev*rng.NormFloat64()
	}
	return max(1, int(math.Ceil(max(0, x))))
}

// meanNormal draws a turn count whose mean is mean (≥ 1) exactly: a
// normal draw kept only within (0.5, 2·mean − 0.5), an interval symmetric
// about the mean, then rounded to the nearest integer, so that every
// count in [1, 2·mean − 1] and its mirror image are equally likely. (AIPerf's
// positiveNormal rejects only negative draws and rounds up: its mean grows
// with the spread, to 81 for --turns 2 --turns-stddev 100.) The spread is
// therefore at most what that interval allows; mean 1 admits only 1. Should
// 10,000 draws in a row fall outside, the mean itself is returned.
func meanNormal(rng *rand.Rand, mean int, stddev float64) int {
	if stddev <= 0 || mean <= 1 {
		return max(1, mean)
	}
	m, half := float64(mean), float64(mean)-0.5
	for range 10000 {
		if x := m + stddev*rng.NormFloat64(); math.Abs(x-m) < half {
			return int(math.RoundToEven(x))
		}
	}
	return mean
}
