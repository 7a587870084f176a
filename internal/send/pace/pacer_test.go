package pace

import (
	"math"
	"testing"
	"time"
)

// The pacers are pure: these tests call them with made-up elapsed times
// and counts (a fake clock), and no goroutine.

func TestRatePacerConstant(t *testing.T) {
	p := NewRatePacer(ArrivalOptions{Rate: 10})
	for _, c := range []struct {
		elapsed time.Duration
		issued  int64
		want    time.Duration
	}{
		{0, 0, 0},
		{0, 1, 100 * time.Millisecond},
		{250 * time.Millisecond, 3, 50 * time.Millisecond},
		// Behind: overdue by 500ms, still its own slot (500ms).
		{time.Second, 5, -500 * time.Millisecond},
		{10 * time.Second, 100, 0},
	} {
		wait, stop := p.Pace(c.elapsed, c.issued)
		if stop || wait != c.want {
			t.Errorf("Pace(%v, %d) = %v, %v; want %v, false", c.elapsed, c.issued, wait, stop, c.want)
		}
	}
}

// With --ramp-up 2s to 10/s the requests by t are 10·t²/(2·2) = 2.5·t²
// up to 2s (10 requests), then 10 a second: slot n is √(n/2.5) s, then
// 2 + (n−10)/10 s (hand-computed).
func TestRatePacerRamp(t *testing.T) {
	p := NewRatePacer(ArrivalOptions{Rate: 10, Ramp: 2 * time.Second})
	for n, want := range map[int64]float64{0: 0, 1: 0.6324555320336759, 4: 1.2649110640673518, 10: 2, 15: 2.5} {
		wait, _ := p.Pace(0, n)
		if math.Abs(wait.Seconds()-want) > 1e-9 {
			t.Errorf("slot %d at %v, want %vs", n, wait, want)
		}
	}
}

// A Poisson pacer's slots are the arrival process's, in order, whatever
// order they are asked in.
func TestRatePacerPoissonOrderFree(t *testing.T) {
	o := ArrivalOptions{Rate: 50, Dist: RatePoisson, Seed: 7}
	a := NewArrivals(o)
	var want []time.Duration
	for range 20 {
		want = append(want, time.Duration(a.Next()*float64(time.Second)))
	}
	p := NewRatePacer(o)
	for _, n := range []int64{19, 3, 0, 11, 19} {
		if got, _ := p.Pace(0, n); got != want[n] {
			t.Errorf("slot %d: %v, want %v", n, got, want[n])
		}
	}
}

// slotClock hands each slot out once, a given-back one first, and dates
// it from the start whenever it is taken.
func TestSlotClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &slotClock{p: NewRatePacer(ArrivalOptions{Rate: 10}), start: t0}
	take := func(now time.Time, wantN int64, wantDue time.Duration) {
		t.Helper()
		n, due, stop := c.take(now)
		if stop || n != wantN || !due.Equal(t0.Add(wantDue)) {
			t.Fatalf("take at %v: slot %d due %v (stop %v); want %d due %v", now.Sub(t0), n, due.Sub(t0), stop, wantN, wantDue)
		}
	}
	take(t0, 0, 0)
	take(t0, 1, 100*time.Millisecond)
	take(t0, 2, 200*time.Millisecond)
	c.giveBack(2)
	c.giveBack(1)
	take(t0.Add(50*time.Millisecond), 1, 100*time.Millisecond)
	take(t0, 2, 200*time.Millisecond)
	// Taken late: still due when its slot was.
	take(t0.Add(time.Second), 3, 300*time.Millisecond)

	lim := &slotClock{p: firstOnly{}, start: t0}
	if _, _, stop := lim.take(t0); stop {
		t.Fatal("first slot refused")
	}
	for range 2 {
		if _, _, stop := lim.take(t0); !stop {
			t.Fatal("second slot of a 1-request pacer handed out")
		}
	}
}

// firstOnly is a pacer that stops after one request.
type firstOnly struct{}

func (firstOnly) Pace(_ time.Duration, issued int64) (time.Duration, bool) { return 0, issued >= 1 }
