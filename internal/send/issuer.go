package send

import (
	"context"
	"math/rand/v2"
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
}

// issuer decides what goes out and when: it hands out sessions (pass
// after pass with --recycle) and admits each request against the rate and
// the --requests budget. Reaching the budget stops it without the grace
// clock: the requests in flight finish normally.
type issuer struct {
	sessions <-chan session
	limit    int64 // --requests; 0 = none
	issued   atomic.Int64
	ticks    <-chan struct{} // nil without --rate
	drain    context.Context
	stop     context.CancelFunc
	deadline time.Time // --duration's end; zero: none
}

// newIssuer starts handing out the sessions of convs until issue is done,
// the deadline (if not zero) is past, the dataset is through (without
// o.Recycle) or the budget is spent.
func newIssuer(issue context.Context, deadline time.Time, convs []*records.Conversation, o LiveOptions) *issuer {
	drain, stop := context.WithCancel(issue)
	is := &issuer{limit: int64(o.Requests), drain: drain, stop: stop, deadline: deadline}
	if o.Rate > 0 {
		is.ticks = pace(drain, o.Rate, o.RateDistribution == RatePoisson, o.Seed)
	}
	ch := make(chan session)
	is.sessions = ch
	var at []time.Duration
	start := time.Now()
	if o.Schedule == ScheduleTimestamps {
		at = offsets(convs, o.Speedup)
	}
	go func() {
		defer close(ch)
		for pass := 0; ; pass++ {
			for i, c := range convs {
				s := session{c: c, pass: pass}
				if at != nil {
					s.due = start.Add(at[i])
				}
				select {
				case ch <- s:
				case <-drain.Done():
					return
				}
			}
			if !o.Recycle {
				return
			}
		}
	}()
	return is
}

// admit waits for the next rate slot and takes one request from the
// budget; false means issue nothing more.
func (is *issuer) admit() bool {
	if is.ticks != nil {
		select {
		case <-is.ticks:
		case <-is.drain.Done():
			return false
		}
	}
	if is.drain.Err() != nil || (!is.deadline.IsZero() && !time.Now().Before(is.deadline)) {
		return false
	}
	if is.limit > 0 && is.issued.Add(1) > is.limit {
		is.stop()
		return false
	}
	return true
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

// pace emits one tick per request slot at the offsets arrivals gives.
// Slots are scheduled from the start time, so a slow consumer gets the
// missed ticks at once rather than a lower rate.
func pace(ctx context.Context, rate float64, poisson bool, seed uint64) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		slots := newArrivals(rate, poisson, seed)
		start := time.Now()
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			at := slots.next()
			if wait := time.Until(start.Add(time.Duration(at * float64(time.Second)))); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// arrivals is the arrival process of --rate: slot offsets in seconds from
// the start, evenly spaced or with exponential gaps (a Poisson process)
// from a seeded generator, so a run's schedule is reproducible.
type arrivals struct {
	rng     *rand.Rand
	rate    float64
	poisson bool
	n       int     // slots handed out
	at      float64 // offset of the next slot
}

func newArrivals(rate float64, poisson bool, seed uint64) *arrivals {
	return &arrivals{rng: rand.New(rand.NewPCG(seed, 0x15c7)), rate: rate, poisson: poisson}
}

// next returns the next slot's offset; the first is 0.
func (a *arrivals) next() float64 {
	at := a.at
	a.n++
	if a.poisson {
		a.at += a.rng.ExpFloat64() / a.rate
	} else {
		a.at = float64(a.n) / a.rate
	}
	return at
}
