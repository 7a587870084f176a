package send

import (
	"context"
	"sync"
	"time"
)

// stopper holds a live run's two stop levels. issue ends when no new
// request may start (the parent is cancelled, --duration is over, or the
// run failed); hard ends when the requests in flight are abandoned: grace
// after issue ends, or at once on abort (output closed).
type stopper struct {
	issue     context.Context
	stopIssue context.CancelCauseFunc
	hard      context.Context
	abort     context.CancelFunc

	// deadline is when --duration ends (zero: none); the context's
	// timer can be delivered late on a busy machine, the clock cannot.
	deadline time.Time

	done     chan struct{} // closed by finished
	once     sync.Once
	mu       sync.Mutex // cleanups, which startDuration adds to
	cleanups []func()
}

func newStopper(parent context.Context, duration, grace time.Duration) *stopper {
	st := &stopper{done: make(chan struct{})}
	var cancel context.CancelFunc
	st.issue, st.stopIssue = context.WithCancelCause(parent)
	st.cleanups = append(st.cleanups, func() { st.stopIssue(nil) })
	if duration > 0 {
		st.deadline = time.Now().Add(duration)
		st.issue, cancel = context.WithDeadline(st.issue, st.deadline)
		st.cleanups = append(st.cleanups, cancel)
	}
	// hard does not derive from parent: a signal only stops issuing, the
	// requests in flight get the grace period.
	st.hard, st.abort = context.WithCancel(context.Background())
	st.cleanups = append(st.cleanups, st.abort)
	go func() {
		select {
		case <-st.issue.Done():
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
				st.abort()
			case <-st.done:
			}
		case <-st.done:
		}
	}()
	return st
}

// startDuration starts --duration now (after a warmup): issuing stops
// when it is over. It returns the end.
func (st *stopper) startDuration(d time.Duration) time.Time {
	end := time.Now().Add(d)
	t := time.AfterFunc(d, func() { st.stopIssue(context.DeadlineExceeded) })
	st.mu.Lock()
	st.cleanups = append(st.cleanups, func() { t.Stop() })
	st.mu.Unlock()
	return end
}

// finished says every request has ended: the grace clock stops.
func (st *stopper) finished() { st.once.Do(func() { close(st.done) }) }

// release frees the contexts.
func (st *stopper) release() {
	st.finished()
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, f := range st.cleanups {
		f()
	}
}
