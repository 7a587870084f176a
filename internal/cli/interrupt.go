package cli

import (
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/jsonl"
)

// StopGrace is how long a command's work may take to stop by itself once
// a signal has come, before the command gives up waiting for it.
var StopGrace = 500 * time.Millisecond // a variable only so tests can lengthen it

// Interruptible runs work and returns its error. When ctx ends first (a
// signal), work gets StopGrace to return by itself; after that
// Interruptible returns abandoned and ctx's cause (an *Interrupted), without
// waiting for work: it may be blocked reading a FIFO that never writes, or
// busy on one huge line, and the process is about to exit. Abandoned work
// must not touch what the caller uses afterwards; its output goes through
// an Output the caller stops (StopOutput).
func Interruptible(ctx context.Context, work func() error) (abandoned bool, err error) {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
	}
	t := time.NewTimer(StopGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return false, err
	case <-t.C:
		return true, context.Cause(ctx)
	}
}

// Output guards a command's stdout for an exit that does not wait for the
// work still writing: each Write goes through whole (jsonl.Writer writes
// whole lines), and after Close nothing more is written.
type Output struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

// NewOutput wraps w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, os.ErrClosed
	}
	return o.w.Write(p)
}

// Close waits for a write in progress and refuses the later ones.
func (o *Output) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// flusher is what StopOutput flushes (a *jsonl.Writer).
type flusher interface{ Flush() error }

// StopOutput ends a command's output after an interruption: what w holds
// goes out as whole lines, given up to StopGrace (a reader that does not
// read must not hold the exit), then out takes no more.
func StopOutput(w flusher, out *Output) {
	done := make(chan struct{})
	go func() {
		w.Flush()
		close(done)
	}()
	t := time.NewTimer(StopGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	out.Close()
}

// ReaderGone wraps a command's stdout for a command whose work does not
// end with its output: once the reader has gone away (`measure --summary
// --summary-json s.json | head -1`), further writes are dropped quietly, so
// the command still reads its whole input and writes its summaries.
type ReaderGone struct {
	w    io.Writer
	gone atomic.Bool
}

// NewReaderGone wraps w.
func NewReaderGone(w io.Writer) *ReaderGone { return &ReaderGone{w: w} }

func (g *ReaderGone) Write(p []byte) (int, error) {
	if g.gone.Load() {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if err != nil && jsonl.IsClosedPipe(err) {
		g.gone.Store(true)
		return len(p), nil
	}
	return n, err
}

// Gone says whether the reader went away.
func (g *ReaderGone) Gone() bool { return g.gone.Load() }

// IsRegularFile says whether r is an open regular file (not a pipe, FIFO
// or terminal): its end is known, so a stop need not wait for it.
func IsRegularFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
