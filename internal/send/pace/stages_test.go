package pace

import (
	"slices"
	"strings"
	"testing"
)

func TestParseStages(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind string
		want []float64
	}{
		{"concurrency:1,2,4,8", StageConcurrency, []float64{1, 2, 4, 8}},
		{"rate:5, 10,20", StageRate, []float64{5, 10, 20}},
		{"concurrency:1..64*2", StageConcurrency, []float64{1, 2, 4, 8, 16, 32, 64}},
		{"concurrency:1..100*3", StageConcurrency, []float64{1, 3, 9, 27, 81}},
		{"rate:10..100+10", StageRate, []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
		{"rate:0.1..0.5+0.1", StageRate, []float64{0.1, 0.2, 0.3, 0.4, 0.5}},
		{"rate:2.5..10*2", StageRate, []float64{2.5, 5, 10}},
	} {
		l, err := ParseStages(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if l.Kind != c.kind || !slices.Equal(l.Values, c.want) {
			t.Errorf("%s: %s %v, want %s %v", c.in, l.Kind, l.Values, c.kind, c.want)
		}
	}
	for in, want := range map[string]string{
		"":                     "want concurrency:LEVELS",
		"load:1,2":             "want concurrency:LEVELS",
		"concurrency:1.5":      "whole number",
		"concurrency:0,1":      "whole number",
		"rate:0":               "above 0",
		"rate:1,x":             `"x" is not a number`,
		"concurrency:4..1*2":   "FROM <= TO",
		"rate:1..2*1":          "FACTOR above 1",
		"rate:1..2+0":          "STEP above 0",
		"rate:1..2":            "FROM..TO*FACTOR",
		"rate:1..1000000+1":    "more than 1000",
		"concurrency:1..8*1.5": "whole number", // 1.5 is not a concurrency
	} {
		_, err := ParseStages(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

// run drives a search against a server that meets the SLO up to capacity
// (and, from clientFrom on, a client that is the limit).
func run(s *Search, capacity, clientFrom float64) []float64 {
	var seen []float64
	for {
		v, ok := s.Next()
		if !ok {
			return seen
		}
		seen = append(seen, v)
		switch {
		case clientFrom > 0 && v >= clientFrom:
			s.Record(ClientLimited)
		case v <= capacity:
			s.Record(Meets)
		default:
			s.Record(Misses)
		}
	}
}

func TestSearch(t *testing.T) {
	six := Levels{Kind: StageConcurrency, Values: []float64{1, 2, 4, 8, 16, 32}}
	// Without --until-slo every level runs, whatever the verdicts.
	if got := run(NewSearch(six, false, 1), 5, 0); !slices.Equal(got, six.Values) {
		t.Errorf("plain sweep ran %v", got)
	}
	// Capacity 5: 8 misses, then 6 (midpoint of 4 and 8), then 5 (of 4
	// and 6) meets; 5 and 6 are 1 apart: done.
	s := NewSearch(six, true, 1)
	if got := run(s, 5, 0); !slices.Equal(got, []float64{1, 2, 4, 8, 6, 5}) {
		t.Errorf("until-slo ran %v", got)
	}
	if r := s.Result(); r != (Result{Highest: 5, OK: true, Lowest: 6, Missed: true}) {
		t.Errorf("result %+v", r)
	}
	// Capacity at a listed level: 4 met, 8 missed, 6 and 5 missed.
	s = NewSearch(six, true, 1)
	if got := run(s, 4, 0); !slices.Equal(got, []float64{1, 2, 4, 8, 6, 5}) {
		t.Errorf("until-slo ran %v", got)
	}
	if r := s.Result(); r.Highest != 4 || r.Lowest != 5 {
		t.Errorf("result %+v", r)
	}
	// Resolution 2 stops once the interval is 2 wide: 8, 6, done.
	s = NewSearch(six, true, 2)
	if got := run(s, 4, 0); !slices.Equal(got, []float64{1, 2, 4, 8, 6}) {
		t.Errorf("resolution 2 ran %v", got)
	}
	// Nothing meets: no bisection.
	s = NewSearch(six, true, 1)
	if got := run(s, 0, 0); !slices.Equal(got, []float64{1}) || s.Result().OK {
		t.Errorf("nothing meets: ran %v, %+v", got, s.Result())
	}
	// Everything meets: the sweep's end.
	s = NewSearch(six, true, 1)
	if got := run(s, 100, 0); !slices.Equal(got, six.Values) || s.Result().Highest != 32 || s.Result().Missed {
		t.Errorf("all meet: ran %v, %+v", got, s.Result())
	}
	// The client is the limit from 8: stop there, and 8 is not the
	// server's limit.
	s = NewSearch(six, true, 1)
	if got := run(s, 5, 8); !slices.Equal(got, []float64{1, 2, 4, 8}) {
		t.Errorf("client-limited ran %v", got)
	}
	if r := s.Result(); r != (Result{Highest: 4, OK: true, ClientLimited: true}) {
		t.Errorf("client-limited result %+v", r)
	}
	// Rates bisect in halves down to the resolution: 40 missed; 30
	// missed; 25 met; 27.5 missed; 26.25 met; 27.5−26.25 = 1.25 ≤ 2.
	s = NewSearch(Levels{Kind: StageRate, Values: []float64{10, 20, 40}}, true, 2)
	if got := run(s, 27, 0); !slices.Equal(got, []float64{10, 20, 40, 30, 25, 27.5, 26.25}) {
		t.Errorf("rate search ran %v", got)
	}
}

// FuzzParseStages: any --stages either parses into levels send can run
// (at most maxStages, each valid for its kind) or is refused; never a
// panic or a runaway sweep.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"concurrency:1,2,4,8", "rate:10..100+10", "concurrency:1..64*2", "rate:1e-300..1e300*1.0000001",
		"rate:0.1..0.3+1e-12", "concurrency:", ":", "rate:NaN", "rate:1..Inf+1", "concurrency:1..2*-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseStages(s)
		if err != nil {
			return
		}
		if len(l.Values) == 0 || len(l.Values) > maxStages {
			t.Fatalf("%q: %d levels", s, len(l.Values))
		}
		for _, v := range l.Values {
			if err := l.check(v); err != nil {
				t.Fatalf("%q: level %v: %v", s, v, err)
			}
		}
	})
}
