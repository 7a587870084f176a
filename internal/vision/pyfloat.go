package vision

import (
	"math"
	"strconv"
)

// pyFloat writes a float as Python's repr does (shortest round trip, ".0"
// on whole numbers), for messages that quote the reference's.
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}

// pyFloorDiv is Python's float a // b (floatobject.c float_floor_div),
// which can be one less than floor(a / b) when the quotient rounds up to a
// whole number.
func pyFloorDiv(a, b float64) float64 {
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div -= 1.0
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fl := math.Floor(div)
	if div-fl > 0.5 {
		fl += 1.0
	}
	return fl
}

// floorDiv is Python's integer a // b.
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// pyRoundHalfEven is Python's round(x) on a float.
func pyRoundHalfEven(x float64) float64 { return math.RoundToEven(x) }
