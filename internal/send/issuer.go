package send

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// session is one conversation of one pass over the dataset.
type session struct {
	c    *records.Conversation
	pass int
	// due is when the session's first request is scheduled (--schedule
	// timestamps); zero otherwise.
	due time.Time
	// first is its first request's slot when the issuer admitted it
	// before handing the session out (take); nil: the worker admits it.
	first *slot
	// taken is when a worker became ready to take it (take's ready): a
	// trace row due before is late for want of a free worker.
	taken time.Time
}

// slot is one admitted request: when it was due to go out (its intended
// start), whether it is a --warmup request, and free: the earliest it
// could go out for the schedule's own constraints (its worker ready, the
// warmup over). free − due, when positive, is its queue wait
// (result.queue_ns): late, but not by the client's fault.
type slot struct {
	due    time.Time
	warmup bool
	free   time.Time
}

// issuer decides what goes out and when: it hands out sessions (pass
// after pass with --recycle) and admits each request against the rate and
// the --requests budget. Reaching the budget stops it without the grace
// clock: the requests in flight finish normally.
//
// With --warmup N the first N requests admitted are warmup requests: paced
// at the constant --rate (no ramp-up), and the measured requests wait
// until every warmup request has ended, then start their own schedule
// (arrival process and ramp-up) from zero.
type issuer struct {
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
	ticks       <-chan time.Time // nil without --rate; each tick carries its slot's time
	warmTick    <-chan time.Time // the warmup's ticks; nil without --rate or --warmup
	warmLeft    atomic.Int64     // warmup requests not yet ended
	warmDone    chan struct{}    // closed when they all have (at once without --warmup)
	drain       context.Context
	stop        context.CancelFunc
	deadline    atomic.Int64 // --duration's end, Unix ns; 0: none (yet: after a warmup)
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

// newIssuer starts handing out the sessions of convs until issue is done,
// the deadline (if not zero) is past, the dataset is through (without
// o.Recycle) or the budget is spent.
func newIssuer(issue context.Context, deadline time.Time, convs []*records.Conversation, o LiveOptions) *issuer {
	drain, stop := context.WithCancel(issue)
	is := &issuer{limit: int64(o.Requests), warmup: int64(o.Warmup), drain: drain, stop: stop,
		warmDone: make(chan struct{}), through: make(chan struct{}), warmBack: make(chan struct{})}
	is.setDeadline(deadline)
	is.warmLeft.Store(is.warmup)
	is.warmToIssue.Store(is.warmup)
	if is.warmup == 0 {
		close(is.warmDone)
	}
	if o.Rate > 0 {
		is.ticks = pace(drain, is.warmDone, newArrivals(o.arrivalOptions()))
		if is.warmup > 0 {
			is.warmTick = pace(drain, nil, newArrivals(arrivalOptions{rate: o.Rate, seed: o.Seed}))
		}
	}
	is.convs, is.recycle, is.start = convs, o.Recycle, time.Now()
	if o.Schedule == ScheduleTimestamps {
		is.at = offsets(convs, o.Speedup)
	}
	return is
}

// sessions yields the sessions to send, in dataset order and pass after
// pass with recycle, until issuing stops (range over it; safe for
// concurrent workers), each first request left for the worker to admit.
func (is *issuer) sessions(yield func(session) bool) {
	for {
		s, ok := is.claim()
		if !ok || !yield(s) {
			return
		}
	}
}

// take hands out the next session to a worker that became ready at
// ready. Without --schedule timestamps the session's first request is
// admitted first (s.first): a worker waiting for a --rate slot holds no
// session, so sessions go out in dataset order, pass after pass, and a
// run sends the same ones each time. (Taken first, every one of 4096
// rate-only workers held one while it waited, and a recycled run of nine
// requests sent passes in the thousands.) A trace's sessions wait for
// their own times, so they are taken first. false: nothing more.
func (is *issuer) take(ready time.Time) (session, bool) {
	if is.at != nil {
		s, ok := is.claim()
		s.taken = ready
		return s, ok
	}
	if !is.recycle && is.next.Load() >= int64(len(is.convs)) {
		return session{}, false
	}
	sl, ok := is.admitUntil(ready, is.through)
	if !ok {
		return session{}, false
	}
	return is.hand(sl)
}

// hand gives an admitted slot its session. It does not ask whether
// issuing stopped since: a worker refused by a spent --requests budget
// stops it, and a slot admitted before is within that budget (it used to
// find issuing stopped and give its place back: --concurrency 64
// --requests 4 now and then sent 3).
func (is *issuer) hand(sl slot) (session, bool) {
	s, ok := is.claimNext()
	if !ok {
		is.unadmit(sl)
		return session{}, false
	}
	s.first = &sl
	return s, true
}

// claim takes the next session unless issuing stopped.
func (is *issuer) claim() (session, bool) {
	if is.drain.Err() != nil {
		return session{}, false
	}
	return is.claimNext()
}

// claimNext takes the next session by one atomic increment of next: a
// channel fed by a goroutine woke that goroutine at every request (make
// bench-send's CPU per request).
func (is *issuer) claimNext() (session, bool) {
	n := int64(len(is.convs))
	if n == 0 {
		return session{}, false
	}
	i := is.next.Add(1) - 1
	pass := int(i / n)
	if !is.recycle {
		if pass > 0 {
			return session{}, false
		}
		if i == n-1 {
			is.throughOnce.Do(func() { close(is.through) })
		}
	}
	s := session{c: is.convs[i%n], pass: pass}
	if is.at != nil {
		s.due = is.start.Add(is.at[i%n])
	}
	return s, true
}

// admit waits for the next rate slot and takes one request from the
// budget; false means issue nothing more. ready is when the worker became
// ready to send: the slot's due time when there is no rate.
func (is *issuer) admit(ready time.Time) (slot, bool) { return is.admitUntil(ready, nil) }

// admitUntil is admit, given up when until is closed (nil: never).
func (is *issuer) admitUntil(ready time.Time, until <-chan struct{}) (slot, bool) {
	sl := slot{due: ready, free: ready}
	var ok bool
	warmOver := is.warmOver()
	if sl.warmup, ok = is.warmPlace(until); !ok {
		return slot{}, false
	}
	if !sl.warmup && !warmOver {
		// A measured request held back by the warmup barrier.
		sl.free = time.Now()
	}
	ticks := is.ticks
	if sl.warmup {
		ticks = is.warmTick
	}
	if ticks != nil {
		select {
		case sl.due = <-ticks:
		case <-is.drain.Done():
			return slot{}, false
		case <-until:
			if sl.warmup {
				is.unadmit(sl)
			}
			return slot{}, false
		}
	}
	if d := is.deadline.Load(); is.drain.Err() != nil || (d != 0 && time.Now().UnixNano() >= d) {
		return slot{}, false
	}
	if !sl.warmup && is.limit > 0 && is.issued.Add(1) > is.limit {
		is.stop()
		return slot{}, false
	}
	return sl, true
}

// warmPlace takes a warmup place if one is left, else waits for the
// warmup to end (false) or for a place given back meanwhile: only later
// turns of the sessions in flight can take one once the dataset is
// through, and one of them may already wait here as a measured request
// (it waited for a warmup that never ended, and the run hung). ok is
// false when issuing stopped or until was closed.
func (is *issuer) warmPlace(until <-chan struct{}) (warm, ok bool) {
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
func (is *issuer) warmOver() bool {
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
func (is *issuer) unadmit(sl slot) {
	switch {
	case sl.warmup:
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
func (is *issuer) takeWarmup() bool {
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

// setDeadline sets --duration's end (zero: none).
func (is *issuer) setDeadline(t time.Time) {
	if !t.IsZero() {
		is.deadline.Store(t.UnixNano())
	}
}

// ended says an admitted request is over; the last warmup request to end
// lets the measured ones start.
func (is *issuer) ended(sl slot) {
	if sl.warmup && is.warmLeft.Add(-1) == 0 {
		close(is.warmDone)
	}
}

// wait sleeps until due; false when issuing stopped first.
func (is *issuer) wait(due time.Time) bool {
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

// close stops the issuer's goroutines.
func (is *issuer) close() { is.stop() }

// pace emits one tick per request slot at the offsets slots gives, from
// the moment begin is closed (nil: at once). Slots are scheduled from that
// start, so a slow consumer gets the missed ticks at once rather than a
// lower rate; each tick carries its slot's time, the request's intended
// start.
func pace(ctx context.Context, begin <-chan struct{}, slots *arrivals) <-chan time.Time {
	ch := make(chan time.Time)
	go func() {
		if begin != nil {
			select {
			case <-begin:
			case <-ctx.Done():
				return
			}
		}
		start := time.Now()
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			due := start.Add(time.Duration(slots.next() * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- due:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// arrivalOptions describe the arrival process of --rate.
type arrivalOptions struct {
	rate float64
	// dist is RateConstant (or ""), RatePoisson or RateGamma; burstiness
	// is the gamma shape.
	dist       string
	burstiness float64
	// ramp is --ramp-up: the rate rises linearly from 0 to rate over it.
	ramp time.Duration
	seed uint64
}

func (o *LiveOptions) arrivalOptions() arrivalOptions {
	a := arrivalOptions{rate: o.Rate, dist: o.RateDistribution, burstiness: o.Burstiness, seed: o.Seed}
	if o.Rate > 0 {
		a.ramp = o.RampUp
	}
	return a
}

// arrivals is the arrival process of --rate: slot offsets in seconds from
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
type arrivals struct {
	o   arrivalOptions
	rng *rand.Rand
	u   float64 // operational time of the next slot
	n   int     // slots handed out
}

func newArrivals(o arrivalOptions) *arrivals {
	return &arrivals{o: o, rng: rand.New(rand.NewPCG(o.seed, 0x15c7))}
}

// next returns the next slot's offset in seconds; the first is 0.
func (a *arrivals) next() float64 {
	u := a.u
	a.n++
	switch a.o.dist {
	case RatePoisson:
		a.u += a.rng.ExpFloat64()
	case RateGamma:
		a.u += gamma(a.rng, a.o.burstiness) / a.o.burstiness
	default:
		a.u = float64(a.n)
	}
	return a.at(u)
}

// at is Λ⁻¹(u): the time in seconds by which u requests are expected.
func (a *arrivals) at(u float64) float64 {
	r, d := a.o.rate, a.o.ramp.Seconds()
	if d <= 0 {
		return u / r
	}
	if half := r * d / 2; u > half {
		return d + (u-half)/r
	}
	return math.Sqrt(2 * d * u / r)
}

// expected is Λ(t), the inverse of at.
func (a *arrivals) expected(t float64) float64 {
	r, d := a.o.rate, a.o.ramp.Seconds()
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

// rampStart is when worker k of c starts with --ramp-up d and no --rate:
// concurrency rises by one at even steps from 1 at the start to c at d
// (AIPerf's --concurrency-ramp-duration).
func rampStart(k, c int, d time.Duration) time.Duration {
	if c <= 1 || d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * float64(k) / float64(c-1))
}
