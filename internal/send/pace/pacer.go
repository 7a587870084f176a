package pace

import (
	"sync"
	"time"
)

// Pacer is the load shape as a pure function, vegeta's Pacer: given the
// time elapsed since the pacer started and the requests issued so far,
// how long to wait before the next one, and whether to stop. Unlike
// vegeta's, the wait may be negative: the next request is overdue by that
// much, and elapsed+wait is still its intended start (the record's
// scheduled_ns), so a client that fell behind sends the missed requests
// at once and says how late each was, rather than lowering the rate.
type Pacer interface {
	Pace(elapsed time.Duration, issued int64) (wait time.Duration, stop bool)
}

// RatePacer paces an arrival process (--rate, its distribution and
// ramp-up): request n goes out at the process's n-th slot. Its slots are
// drawn in order and kept, so Pace is a function of its arguments (the
// seed fixed); safe for concurrent use.
type RatePacer struct {
	mu    sync.Mutex
	a     *Arrivals
	slots []time.Duration
}

// NewRatePacer paces the arrival process o describes.
func NewRatePacer(o ArrivalOptions) *RatePacer { return &RatePacer{a: NewArrivals(o)} }

// Pace implements Pacer; a rate never stops by itself.
func (p *RatePacer) Pace(elapsed time.Duration, issued int64) (time.Duration, bool) {
	return p.Slot(issued) - elapsed, false
}

// Slot is request n's offset from the start.
func (p *RatePacer) Slot(n int64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	for int64(len(p.slots)) <= n {
		p.slots = append(p.slots, time.Duration(p.a.Next()*float64(time.Second)))
	}
	return p.slots[n]
}

// slotClock hands out the slots of a pacer to concurrent workers: each
// takes the next request number, and its intended start from the pacer,
// under one lock. A slot taken and not used (the worker gave up waiting)
// is given back and the next taker gets it, so the schedule keeps no
// hole (a goroutine sending ticks on a channel did the same by not
// sending; it woke at every request).
type slotClock struct {
	mu    sync.Mutex
	p     Pacer
	start time.Time
	n     int64
	back  []int64 // slots given back, taken again first
}

// begin starts the clock at t (the measured requests' schedule starts
// when the warmup is over).
func (c *slotClock) begin(t time.Time) {
	c.mu.Lock()
	c.start = t
	c.mu.Unlock()
}

// take returns the next slot's number and intended start, as of now;
// stop when the pacer says so.
func (c *slotClock) take(now time.Time) (n int64, due time.Time, stop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := len(c.back); k > 0 {
		n = c.back[0]
		c.back = c.back[1:]
	} else {
		n = c.n
		c.n++
	}
	elapsed := now.Sub(c.start)
	wait, stop := c.p.Pace(elapsed, n)
	if stop {
		c.insert(n) // still unused: a later taker is refused as well
		return n, time.Time{}, true
	}
	return n, now.Add(wait), false
}

// giveBack returns an unused slot, kept in order so the earliest goes
// first.
func (c *slotClock) giveBack(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.insert(n)
}

func (c *slotClock) insert(n int64) {
	i := 0
	for i < len(c.back) && c.back[i] < n {
		i++
	}
	c.back = append(c.back, 0)
	copy(c.back[i+1:], c.back[i:])
	c.back[i] = n
}
