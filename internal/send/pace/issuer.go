// Package pace is send's load shaping: the arrival processes of --rate
// (constant, Poisson, gamma; ramped up or not: Arrivals, a pure function
// of its seed, testable without a clock), the workers' --ramp-up starts
// without --rate (RampStart), the trace times of --schedule timestamps
// (Offsets), and the Issuer: which session goes out next (dataset order,
// pass after pass with --recycle), and when each request may (its --rate
// slot, the --warmup places and barrier, the --requests budget and the
// --duration deadline).
package pace

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// Session is one conversation of one pass over the dataset.
type Session struct {
	Conv *records.Conversation
	Pass int
	// Due is when the session's first request is scheduled (--schedule
	// timestamps); zero otherwise.
	Due time.Time
	// First is its first request's slot when the issuer admitted it
	// before handing the session out (Take); nil: the worker admits it.
	First *Slot
	// Taken is when a worker became ready to take it (Take's ready): a
	// trace row due before is late for want of a free worker.
	Taken time.Time
}

// Slot is one admitted request: when it was due to go out (its intended
// start), whether it is a --warmup request, and free: the earliest it
// could go out for the schedule's own constraints (its worker ready, the
// warmup over). free − due, when positive, is its queue wait
// (result.queue_ns): late, but not by the client's fault.
type Slot struct {
	Due    time.Time
	Warmup bool
	Free   time.Time
}

// Issuer decides what goes out and when: it hands out sessions (pass
// after pass with --recycle) and admits each request against the rate and
// the --requests budget. Reaching the budget stops it without the grace
// clock: the requests in flight finish normally.
//
// With --warmup N the first N requests admitted are warmup requests: paced
// at the constant --rate (no ramp-up), and the measured requests wait
// until every warmup request has ended, then start their own schedule
// (arrival process and ramp-up) from zero.
type Issuer struct {
	// convs are handed out in order, pass after pass with recycle, each
	// session taken by one atomic increment of next (sessions); at are
	// the --schedule timestamps' offsets from start (nil: none).
	convs   []*records.Conversation
	recycle bool
	at      []time.Duration
	start   time.Time
	next    atomic.Int64
	limit   int64        // --requests; 0 = none
	warmup  int64        // --warmup
	issued  atomic.Int64 // measured requests admitted
	// warmToIssue counts the warmup requests not yet admitted.
	warmToIssue atomic.Int64
	// clock hands out the measured requests' --rate slots (nil without
	// --rate), from the end of the warmup; warmClock the warmup's (nil
	// without --rate or --warmup).
	clock     *slotClock
	warmClock *slotClock
	warmLeft  atomic.Int64  // warmup requests not yet ended
	warmDone  chan struct{} // closed when they all have (at once without --warmup)
	drain     context.Context
	stop      context.CancelFunc
	deadline  atomic.Int64 // --duration's end, Unix ns; 0: none (yet: after a warmup)
	// through is closed when the last session of a dataset sent once
	// (no --recycle) is taken: workers waiting for a slot to take one
	// stop waiting.
	through     chan struct{}
	throughOnce sync.Once
	// warmBack is closed, and replaced, when a warmup place is given back
	// (unadmit): a measured request waiting for the warmup to end takes
	// it instead.
	warmMu   sync.Mutex
	warmBack chan struct{}
}

// Shape is what an issuer admits, and when.
type Shape struct {
	// Arrivals is the --rate arrival process (Rate 0: none, each request
	// goes out when its worker is ready).
	Arrivals ArrivalOptions
	// Warmup requests go first, paced at the constant rate; Requests caps
	// the measured ones (0: no cap); Recycle starts the dataset over.
	Warmup, Requests int
	Recycle          bool
	// Offsets are the --schedule timestamps' times of the conversations
	// from the start (nil: no trace schedule).
	Offsets []time.Duration
	// From is the first session to hand out, counted over passes (Next
	// of the issuer before: a stage of a staged run goes on where the
	// one before stopped, so it sends no request the server has cached).
	From int64
}

// NewIssuer starts handing out the sessions of convs until issue is done,
// the deadline (if not zero) is past, the dataset is through (without
// sh.Recycle) or the budget is spent.
func NewIssuer(issue context.Context, deadline time.Time, convs []*records.Conversation, sh Shape) *Issuer {
	drain, stop := context.WithCancel(issue)
	is := &Issuer{limit: int64(sh.Requests), warmup: int64(sh.Warmup), drain: drain, stop: stop,
		warmDone: make(chan struct{}), through: make(chan struct{}), warmBack: make(chan struct{})}
	is.SetDeadline(deadline)
	is.warmLeft.Store(is.warmup)
	is.warmToIssue.Store(is.warmup)
	if is.warmup == 0 {
		close(is.warmDone)
	}
	is.convs, is.recycle, is.start, is.at = convs, sh.Recycle, time.Now(), sh.Offsets
	is.next.Store(sh.From)
	if sh.Arrivals.Rate > 0 {
		// The measured schedule starts at the end of the warmup (Ended).
		is.clock = &slotClock{p: NewRatePacer(sh.Arrivals), start: is.start}
		if is.warmup > 0 {
			is.warmClock = &slotClock{p: NewRatePacer(ArrivalOptions{Rate: sh.Arrivals.Rate, Seed: sh.Arrivals.Seed}), start: is.start}
		}
	}
	return is
}

// WarmDone is closed once every warmup request has ended (at once
// without --warmup).
func (is *Issuer) WarmDone() <-chan struct{} { return is.warmDone }

// sessions yields the sessions to send, in dataset order and pass after
// pass with recycle, until issuing stops (range over it; safe for
// concurrent workers), each first request left for the worker to admit.
func (is *Issuer) sessions(yield func(Session) bool) {
	for {
		s, ok := is.claim()
		if !ok || !yield(s) {
			return
		}
	}
}

// Take hands out the next session to a worker that became ready at
// ready. Without --schedule timestamps the session's first request is
// admitted first (s.First): a worker waiting for a --rate slot holds no
// session, so sessions go out in dataset order, pass after pass, and a
// run sends the same ones each time. (Taken first, every one of 4096
// rate-only workers held one while it waited, and a recycled run of nine
// requests sent passes in the thousands.) A trace's sessions wait for
// their own times, so they are taken first. false: nothing more.
func (is *Issuer) Take(ready time.Time) (Session, bool) {
	if is.at != nil {
		s, ok := is.claim()
		s.Taken = ready
		return s, ok
	}
	if !is.recycle && is.next.Load() >= int64(len(is.convs)) {
		return Session{}, false
	}
	sl, ok := is.admitUntil(ready, is.through)
	if !ok {
		return Session{}, false
	}
	return is.hand(sl)
}

// hand gives an admitted slot its session. It does not ask whether
// issuing stopped since: a worker refused by a spent --requests budget
// stops it, and a slot admitted before is within that budget (it used to
// find issuing stopped and give its place back: --concurrency 64
// --requests 4 now and then sent 3).
func (is *Issuer) hand(sl Slot) (Session, bool) {
	s, ok := is.claimNext()
	if !ok {
		is.unadmit(sl)
		return Session{}, false
	}
	s.First = &sl
	return s, true
}

// claim takes the next session unless issuing stopped.
func (is *Issuer) claim() (Session, bool) {
	if is.drain.Err() != nil {
		return Session{}, false
	}
	return is.claimNext()
}

// claimNext takes the next session by one atomic increment of next: a
// channel fed by a goroutine woke that goroutine at every request (make
// bench-send's CPU per request).
func (is *Issuer) claimNext() (Session, bool) {
	n := int64(len(is.convs))
	if n == 0 {
		return Session{}, false
	}
	i := is.next.Add(1) - 1
	pass := int(i / n)
	if !is.recycle {
		if pass > 0 {
			return Session{}, false
		}
		if i == n-1 {
			is.throughOnce.Do(func() { close(is.through) })
		}
	}
	s := Session{Conv: is.convs[i%n], Pass: pass}
	if is.at != nil {
		s.Due = is.start.Add(is.at[i%n])
	}
	return s, true
}

// Admit waits for the next rate slot and takes one request from the
// budget; false means issue nothing more. ready is when the worker became
// ready to send: the slot's due time when there is no rate.
func (is *Issuer) Admit(ready time.Time) (Slot, bool) { return is.admitUntil(ready, nil) }

// admitUntil is admit, given up when until is closed (nil: never).
func (is *Issuer) admitUntil(ready time.Time, until <-chan struct{}) (Slot, bool) {
	sl := Slot{Due: ready, Free: ready}
	var ok bool
	warmOver := is.warmOver()
	if sl.Warmup, ok = is.warmPlace(until); !ok {
		return Slot{}, false
	}
	if !sl.Warmup && !warmOver {
		// A measured request held back by the warmup barrier.
		sl.Free = time.Now()
	}
	clock := is.clock
	if sl.Warmup {
		clock = is.warmClock
	}
	if clock != nil {
		n, due, stop := clock.take(time.Now())
		if stop {
			return Slot{}, false
		}
		switch is.sleep(due, until) {
		case stopped:
			clock.giveBack(n)
			return Slot{}, false
		case gaveUp:
			clock.giveBack(n)
			if sl.Warmup {
				is.unadmit(sl)
			}
			return Slot{}, false
		}
		sl.Due = due
	}
	if d := is.deadline.Load(); is.drain.Err() != nil || (d != 0 && time.Now().UnixNano() >= d) {
		return Slot{}, false
	}
	if !sl.Warmup && is.limit > 0 && is.issued.Add(1) > is.limit {
		is.stop()
		return Slot{}, false
	}
	return sl, true
}

// warmPlace takes a warmup place if one is left, else waits for the
// warmup to end (false) or for a place given back meanwhile: only later
// turns of the sessions in flight can take one once the dataset is
// through, and one of them may already wait here as a measured request
// (it waited for a warmup that never ended, and the run hung). ok is
// false when issuing stopped or until was closed.
func (is *Issuer) warmPlace(until <-chan struct{}) (warm, ok bool) {
	for {
		select {
		case <-is.warmDone:
			return false, true
		case <-until:
			return false, false
		default:
		}
		is.warmMu.Lock()
		back := is.warmBack
		is.warmMu.Unlock()
		if is.takeWarmup() {
			return true, true
		}
		select {
		case <-is.warmDone:
			return false, true
		case <-back:
		case <-is.drain.Done():
			return false, false
		case <-until:
			return false, false
		}
	}
}

// warmOver says whether every warmup request has ended.
func (is *Issuer) warmOver() bool {
	select {
	case <-is.warmDone:
		return true
	default:
		return false
	}
}

// unadmit gives back a slot that carried no request (the dataset, sent
// once, was through): its warmup place, to a request waiting for one, or
// its share of the budget.
func (is *Issuer) unadmit(sl Slot) {
	switch {
	case sl.Warmup:
		is.warmMu.Lock()
		is.warmToIssue.Add(1)
		close(is.warmBack)
		is.warmBack = make(chan struct{})
		is.warmMu.Unlock()
	case is.limit > 0:
		is.issued.Add(-1)
	}
}

// takeWarmup takes one of the --warmup requests, if any is left.
func (is *Issuer) takeWarmup() bool {
	for {
		n := is.warmToIssue.Load()
		if n <= 0 {
			return false
		}
		if is.warmToIssue.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// SetDeadline sets --duration's end (zero: none).
func (is *Issuer) SetDeadline(t time.Time) {
	if !t.IsZero() {
		is.deadline.Store(t.UnixNano())
	}
}

// Ended says an admitted request is over; the last warmup request to end
// lets the measured ones start.
func (is *Issuer) Ended(sl Slot) {
	if sl.Warmup && is.warmLeft.Add(-1) == 0 {
		if is.clock != nil {
			is.clock.begin(time.Now())
		}
		close(is.warmDone)
	}
}

// Wait sleeps until due; false when issuing stopped first.
func (is *Issuer) Wait(due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return is.drain.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-is.drain.Done():
		return false
	}
}

// Close stops issuing.
func (is *Issuer) Close() { is.stop() }

// Next is the next session the issuer would hand out, counted over
// passes: where the next stage of a staged run goes on (Shape.From).
func (is *Issuer) Next() int64 { return is.next.Load() }

// How a sleep ended.
const (
	slept   = iota
	stopped // issuing stopped
	gaveUp  // until was closed
)

// sleep waits until due (a slot's intended start), or less when issuing
// stops or until is closed (nil: never). An overdue slot goes at once.
func (is *Issuer) sleep(due time.Time, until <-chan struct{}) int {
	d := time.Until(due)
	if d <= 0 {
		return slept
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return slept
	case <-is.drain.Done():
		return stopped
	case <-until:
		return gaveUp
	}
}

// Offsets are the conversations' times relative to the first, divided by
// speedup.
func Offsets(convs []*records.Conversation, speedup float64) []time.Duration {
	out := make([]time.Duration, len(convs))
	if len(convs) == 0 {
		return out
	}
	first := *convs[0].Trace.TimestampMs
	for i, c := range convs {
		ms := (*c.Trace.TimestampMs - first) / speedup
		out[i] = time.Duration(ms * float64(time.Millisecond))
	}
	return out
}
