package send

import (
	"context"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/send/pace"
)

// poster sends one request body (the client; a fake in tests).
type poster interface {
	do(hard context.Context, timeout time.Duration, body []byte) records.Result
}

// worker sends the turns of one session after another, each turn with the
// replies so far as history.
type worker struct {
	reqs      requests // plain, or sized (send --exact)
	post      poster
	hard      context.Context // abandons the request in flight
	timeout   time.Duration
	noPayload bool
	admit     func(ready time.Time) (pace.Slot, bool) // false: issue nothing more
	ended     func(pace.Slot)                         // an admitted request is over
	emit      func(*records.Request) error            // writes the record
	observe   func(time.Duration)                     // benchmarks: send's own time
	cache     *cachePredictor                         // expected cached tokens, in issue order
	wait      func(time.Time) bool                    // sleeps until a scheduled time; false: issue nothing more
	now       func() time.Time                        // when a worker is ready (time.Now; a fake clock in tests)
	stage     *records.Stage                          // the stage every record carries (--stages); nil: none

	// The session in progress (a worker sends one at a time), held here
	// because a local passed through reqs would be allocated at every
	// session: its sizing state, and the buffer of its replies (reused).
	sizing  exact.Session
	replies []string
	// chain is the Builder when send --responses-chain chains the turns.
	chain *Builder
}

// session sends s's turns in order. more is false when the issuer admits
// no more requests; err is a failure of the run (a body that cannot be
// built, the output gone), never of a request.
//
// Every request records its intended start (scheduled_ns): its trace time
// (--schedule timestamps, first turns), its --rate slot, or else the
// moment the worker was ready to send it (the previous request's end, or
// ready: the worker's --ramp-up start); and how late it went out
// (schedule_lag_ns): send's own delay, plus the wait for a free worker
// when --concurrency holds back a --rate or a trace, or for the warmup to
// end; that wait, the schedule's own, is queue_ns.
func (w *worker) session(s pace.Session, ready time.Time) (more bool, err error) {
	replies := w.replies[:0]
	defer func() { clear(replies); w.replies = replies[:0] }()
	synthetic := false
	prevID := "" // the previous answer's id (--responses-chain)
	c := w.reqs.conversation(s.Conv)
	w.sizing = exact.Session{}
	for t := range s.Conv.Turns {
		if t == 0 && !s.Due.IsZero() {
			if !w.wait(s.Due) {
				return false, nil
			}
			ready = s.Due
		}
		if ready.IsZero() {
			ready = w.now()
		}
		var sl pace.Slot
		if t == 0 && s.First != nil {
			sl = *s.First // admitted before the session was taken
		} else {
			var ok bool
			if sl, ok = w.admit(ready); !ok {
				return false, nil
			}
		}
		if t == 0 && s.Taken.After(sl.Free) {
			sl.Free = s.Taken // a trace row due before a worker was free
		}
		ready = time.Time{}
		t0 := time.Now()
		m, err := w.reqs.make(c, s.Conv, t, s.Pass, replies, &w.sizing)
		if err != nil {
			// Conversations were checked up front; this is a bug or an
			// impossible input, and it stops the run.
			w.ended(sl)
			return false, err
		}
		built := m.Built
		rec := newRecord(c, t, s.Pass, built)
		if t > 0 || s.Pass > 0 && built.Marker != "" {
			// compose counted the dry-run request: a later turn's history
			// holds the server's replies, and a recycle pass's marker is
			// not pass 0's (its count differs by a few tokens; issue 27
			// item 4). Without --exact send has no model to count what it
			// sends: unknown. (--exact sets it below.)
			rec.ExpectedISL = nil
		}
		if w.chain != nil {
			if err := w.chain.chain(&built, &rec, prevID); err != nil {
				w.ended(sl)
				return false, err
			}
		}
		rec.SyntheticHistory = synthetic
		rec.Warmup = sl.Warmup
		rec.Stage = w.stage
		if m.ResizedFrom == nil {
			rec.ExpectedCachedTokens = w.cache.expect(s.Conv, t, s.Pass, built.Marker, true)
		}
		buildDur := time.Since(t0)
		res := w.post.do(w.hard, w.timeout, built.Body)
		w.ended(sl)
		t1 := w.now()
		w.reqs.sent(m, &rec, &res, buildDur)
		if w.noPayload {
			rec.Payload = nil
			if rec.Chained != nil {
				rec.Chained.Reconstructed = nil
			}
		}
		due := sl.Due.UnixNano()
		late := res.StartNs - due
		res.ScheduledNs, res.ScheduleLagNs = &due, &late
		if queue := min(sl.Free.UnixNano()-due, late); queue > 0 {
			res.QueueNs = &queue
		}
		rec.Result = &res
		prevID = res.ResponseID // none after a failure: the next turn goes whole
		if res.OK {
			replies = append(replies, res.OutputText)
		} else {
			// The next turn still goes out, with compose's reply in place
			// of the one that never came.
			replies = append(replies, c.Turns[t].Assistant)
			synthetic = true
		}
		if err := w.emit(&rec); err != nil {
			return false, &writeError{err}
		}
		if w.observe != nil {
			w.observe(buildDur + time.Since(t1))
		}
		// The next turn is due as soon as this one's answer is in: the
		// time send takes to record it counts as lag.
		ready = t1
	}
	return true, nil
}
