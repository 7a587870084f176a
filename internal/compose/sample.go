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
