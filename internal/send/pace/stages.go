package pace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Stage kinds: what a staged run's levels hold (send --stages).
const (
	StageConcurrency = "concurrency"
	StageRate        = "rate"
)

// maxStages bounds a sweep's levels: a typo in a shorthand
// (rate:1..1000000+1) must not plan a run of a million stages.
const maxStages = 1000

// Levels are the load levels of --stages, in the order given: sessions
// in flight (StageConcurrency) or requests per second (StageRate).
type Levels struct {
	Kind   string
	Values []float64
}

// ParseStages reads --stages: KIND:LIST with KIND concurrency or rate and
// LIST the levels, comma-separated (concurrency:1,2,4,8; rate:5,10,20),
// or a sweep: FROM..TO*FACTOR, geometric (concurrency:1..64*2 is 1, 2,
// 4, … 64), or FROM..TO+STEP, linear (rate:10..100+10); a sweep stops at
// the last level not above TO. Concurrency levels are whole numbers.
func ParseStages(s string) (Levels, error) {
	kind, list, ok := strings.Cut(s, ":")
	kind = strings.TrimSpace(kind)
	if !ok || (kind != StageConcurrency && kind != StageRate) {
		return Levels{}, fmt.Errorf("--stages %q: want concurrency:LEVELS or rate:LEVELS (e.g. concurrency:1,2,4,8, rate:10..100+10, concurrency:1..64*2)", s)
	}
	l := Levels{Kind: kind}
	list = strings.TrimSpace(list)
	var err error
	if strings.Contains(list, "..") {
		l.Values, err = sweep(list)
	} else {
		for part := range strings.SplitSeq(list, ",") {
			var v float64
			if v, err = number(part); err != nil {
				break
			}
			l.Values = append(l.Values, v)
		}
	}
	if err != nil {
		return Levels{}, fmt.Errorf("--stages %q: %w", s, err)
	}
	if len(l.Values) > maxStages {
		return Levels{}, fmt.Errorf("--stages %q: %d levels, more than %d", s, len(l.Values), maxStages)
	}
	for _, v := range l.Values {
		if err := l.check(v); err != nil {
			return Levels{}, fmt.Errorf("--stages %q: %w", s, err)
		}
	}
	return l, nil
}

// check refuses a level send cannot run.
func (l Levels) check(v float64) error {
	if l.Kind == StageConcurrency {
		if v != math.Trunc(v) || v < 1 || v > 100000 {
			return fmt.Errorf("concurrency %v: want a whole number from 1 to 100000", v)
		}
		return nil
	}
	if !(v > 0 && v <= 1e6) {
		return fmt.Errorf("rate %v: want requests per second above 0, up to 1e6", v)
	}
	return nil
}

// Increasing says whether every level is above the one before (--until-slo
// needs a rising load).
func (l Levels) Increasing() bool {
	for i := 1; i < len(l.Values); i++ {
		if l.Values[i] <= l.Values[i-1] {
			return false
		}
	}
	return true
}

func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", strings.TrimSpace(s))
	}
	return v, nil
}

// sweep expands FROM..TO*FACTOR or FROM..TO+STEP.
func sweep(s string) ([]float64, error) {
	from, rest, _ := strings.Cut(s, "..")
	op := strings.IndexAny(rest, "*+")
	if op < 0 {
		return nil, fmt.Errorf("sweep %q: want FROM..TO*FACTOR (geometric) or FROM..TO+STEP (linear)", s)
	}
	a, err := number(from)
	if err != nil {
		return nil, err
	}
	b, err := number(rest[:op])
	if err != nil {
		return nil, err
	}
	f, err := number(rest[op+1:])
	if err != nil {
		return nil, err
	}
	switch {
	case a <= 0 || b < a:
		return nil, fmt.Errorf("sweep %q: want 0 < FROM <= TO", s)
	case rest[op] == '*' && f <= 1:
		return nil, fmt.Errorf("sweep %q: want a FACTOR above 1", s)
	case rest[op] == '+' && f <= 0:
		return nil, fmt.Errorf("sweep %q: want a STEP above 0", s)
	}
	// Levels are computed from FROM (not by repeated addition) so that
	// 0.1 steps do not drift, and compared to TO with a little slack for
	// the same reason.
	var out []float64
	for i := 0; ; i++ {
		var v float64
		if rest[op] == '*' {
			v = a * math.Pow(f, float64(i))
		} else {
			v = a + f*float64(i)
		}
		if v > b*(1+1e-9) {
			break
		}
		if len(out) > maxStages {
			break // refused by the caller
		}
		out = append(out, math.Round(v*1e9)/1e9)
	}
	return out, nil
}

// Verdict is a stage's outcome for --until-slo.
type Verdict int

const (
	// Meets: the stage's goodput is at or above the goal.
	Meets Verdict = iota
	// Misses: below the goal, the server's doing.
	Misses
	// ClientLimited: below the goal while send itself was saturated: the
	// miss may be the client's, so it is never taken for the server's
	// limit, and the search stops there.
	ClientLimited
)

// Search is the order a staged run goes through its levels: each in
// turn; with --until-slo, up to the first stage that misses the SLO, then
// halving the interval between the last level that met it and that one
// until it is no wider than the resolution. Pure: the run tells it each
// stage's verdict (Record) and asks for the next level (Next).
type Search struct {
	levels     Levels
	untilSLO   bool
	resolution float64
	i          int // next listed level
	// good and bad are the highest level met and the lowest missed.
	good, bad         float64
	haveGood, haveBad bool
	clientLimited     bool
	last              float64 // the level Next handed out last
	done              bool
}

// NewSearch goes through l; with untilSLO it stops and bisects as said,
// down to resolution (in the levels' unit; concurrency bisects whole
// numbers, so below 1 is 1).
func NewSearch(l Levels, untilSLO bool, resolution float64) *Search {
	if l.Kind == StageConcurrency {
		resolution = max(resolution, 1)
	}
	return &Search{levels: l, untilSLO: untilSLO, resolution: resolution}
}

// Next is the level of the next stage; false when the run is over.
func (s *Search) Next() (float64, bool) {
	if s.done {
		return 0, false
	}
	if s.haveBad {
		// Bisecting between the last good level and the first bad one.
		if !s.haveGood || s.bad-s.good <= s.resolution {
			s.done = true
			return 0, false
		}
		mid := (s.good + s.bad) / 2
		if s.levels.Kind == StageConcurrency {
			mid = math.Floor(mid)
		}
		if mid <= s.good || mid >= s.bad {
			s.done = true
			return 0, false
		}
		s.last = mid
		return mid, true
	}
	if s.i >= len(s.levels.Values) {
		s.done = true
		return 0, false
	}
	s.last = s.levels.Values[s.i]
	s.i++
	return s.last, true
}

// Record is the verdict of the stage Next handed out last; without
// --until-slo it changes nothing.
func (s *Search) Record(v Verdict) {
	if !s.untilSLO {
		return
	}
	switch v {
	case Meets:
		if !s.haveGood || s.last > s.good {
			s.good, s.haveGood = s.last, true
		}
	case Misses:
		if !s.haveBad || s.last < s.bad {
			s.bad, s.haveBad = s.last, true
		}
	case ClientLimited:
		s.clientLimited, s.done = true, true
	}
}

// Result is what an --until-slo search found: the highest level that met
// the SLO (ok false: none did), the lowest that missed it (missed false:
// none did), and whether it stopped at a stage where the client was the
// limit.
type Result struct {
	Highest       float64
	OK            bool
	Lowest        float64
	Missed        bool
	ClientLimited bool
}

// Result is the search's outcome so far.
func (s *Search) Result() Result {
	return Result{Highest: s.good, OK: s.haveGood, Lowest: s.bad, Missed: s.haveBad, ClientLimited: s.clientLimited}
}
