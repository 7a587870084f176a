package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/islkit/islkit/internal/jsonl"
)

// Interrupted is the context.Cause of a context cancelled by HandleSignals.
type Interrupted struct{ Signal os.Signal }

func (e *Interrupted) Error() string { return "interrupted by signal: " + e.Signal.String() }

// ExitCode is the conventional shell status for the signal (130 for
// SIGINT, 143 for SIGTERM).
func (e *Interrupted) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// HandleSignals returns a context that is cancelled, with an *Interrupted
// cause, on the first SIGINT or SIGTERM, so a command stops reading, flushes
// the records it has, and exits. After that first signal the default
// handling comes back, so a second Ctrl-C kills a command stuck somewhere.
// Call stop when done to release the handler.
//
// It also ignores SIGPIPE: by default the Go runtime kills a program that
// writes to a closed stdout, with status 141. Ignored, the write returns
// EPIPE instead, jsonl.Writer reports ErrClosedPipe, and the command exits 0.
func HandleSignals(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(&Interrupted{Signal: sig})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(context.Canceled)
		})
	}
}

// Stop is what a filter that drains its input learns from signals
// (HandleStopSignals).
type Stop struct {
	// Signalled ends on the first SIGINT or SIGTERM, its cause the
	// *Interrupted whose exit code the command ends with.
	Signalled context.Context
	// Now ends on SIGTERM, or on a second SIGINT: stop reading at once.
	// A first SIGINT (Ctrl-C, which every stage of a pipeline gets) leaves
	// the input to end by itself: the stage before finishes what it has
	// and closes its output.
	Now context.Context
}

// HandleStopSignals is HandleSignals for a filter that finishes what its
// input still brings after a Ctrl-C (measure after send): the first
// SIGINT cancels Signalled only, a SIGTERM or a second SIGINT cancels Now
// too; after that the default handling comes back, so one more kills.
func HandleStopSignals(parent context.Context) (Stop, context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	signalled, cancelSignalled := context.WithCancelCause(parent)
	now, cancelNow := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancelSignalled(&Interrupted{Signal: sig})
			if sig == syscall.SIGTERM {
				signal.Stop(ch)
				cancelNow(&Interrupted{Signal: sig})
				return
			}
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancelNow(&Interrupted{Signal: sig})
		case <-done:
		}
	}()
	var once sync.Once
	return Stop{Signalled: signalled, Now: now}, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancelSignalled(context.Canceled)
			cancelNow(context.Canceled)
		})
	}
}

// StopSignals returns HandleStopSignals' contexts for the process.
func StopSignals() (Stop, context.CancelFunc) {
	return HandleStopSignals(context.Background())
}

// Quiet maps the end-of-output case to nil so a command can write
// `if err := cli.Quiet(err); err != nil { ...exit 1 }`: a reader that
// went away (`| head`) is not a failure.
func Quiet(err error) error {
	if jsonl.IsClosedPipe(err) {
		return nil
	}
	return err
}

// InterruptedBy returns the signal that cancelled ctx, if HandleSignals did.
func InterruptedBy(ctx context.Context) (*Interrupted, bool) {
	var in *Interrupted
	ok := errors.As(context.Cause(ctx), &in)
	return in, ok
}

// Signals returns a context cancelled by Ctrl-C / SIGTERM.
func Signals() (context.Context, context.CancelFunc) {
	return HandleSignals(context.Background())
}

// StopReading returns the context that stops a draining filter's reading
// (measure's): at once on a SIGTERM or a second Ctrl-C, and on the first
// Ctrl-C when the input is a regular file. A pipe is read on after the
// first Ctrl-C until it ends: the stage before got the same Ctrl-C, and
// the records it writes as it stops (send's cancelled requests) are
// measured too. The caller stores in fromFile whether the input being read
// is a regular file (IsRegularFile).
func StopReading(sig Stop, stderr io.Writer, tool string) (reading context.Context, fromFile *atomic.Bool) {
	reading, stop := context.WithCancelCause(context.Background())
	fromFile = new(atomic.Bool)
	go func() {
		select {
		case <-sig.Now.Done():
		case <-sig.Signalled.Done():
			if _, ok := InterruptedBy(sig.Signalled); ok && !fromFile.Load() && sig.Now.Err() == nil {
				fmt.Fprintf(stderr, "%s: interrupted: going on with what the input still brings until it ends (Ctrl-C again to stop now)\n", tool)
				<-sig.Now.Done()
			}
		}
		stop(context.Cause(sig.Signalled))
	}()
	return reading, fromFile
}
