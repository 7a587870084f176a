// Package pipeline runs a per-line function over a JSONL stream on several
// cores while writing results in input order, so `measure` scales with
// cores and still behaves as a filter.
package pipeline

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/islkit/islkit/internal/jsonl"
)

// Func turns one input line into output lines (usually one; none writes
// nothing; a document such as AIPerf's inputs.json expands to many). Lines
// returned with an error are still written: a document can fail in part.
type Func[V any] func(line jsonl.Line) (Output[V], error)

// Output is what Func made of one line: the lines to write, and a value
// handed, in input order, to Map's sink (measure's summary reads the
// counts there instead of parsing its own output again).
type Output[V any] struct {
	Lines [][]byte
	Value V
}

// Stats counts what Map did.
type Stats struct {
	Lines, Failed int
}

// memberRoom is the spare capacity of each line handed to Func: enough
// for measure's isl member of a request.
const memberRoom = 4 << 10

// lineBuffers holds the buffers of lines written: a line's copy is made in one
// that is warm in the cache instead of in fresh memory, which a log of
// images (megabytes a line) made the largest share of measure's
// allocation. fn must not keep line.Data past its sink.
var lineBuffers sync.Pool

// maxPooledLine bounds the buffers kept.
const maxPooledLine = 1 << 20

func lineBuffer(size int) []byte {
	if b, ok := lineBuffers.Get().(*[]byte); ok && cap(*b) >= size {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

func recycle(b []byte) {
	if cap(b) > 0 && cap(b) <= maxPooledLine {
		b = b[:0]
		lineBuffers.Put(&b)
	}
}

type job struct {
	seq  int
	line jsonl.Line
	err  error // the line could not be read (too long): report it
}

type result[V any] struct {
	seq  int
	line jsonl.Line
	out  Output[V]
	err  error
	ran  bool // fn ran on the line (it was read)
}

// Map reads r to the end, applies fn with up to workers goroutines and
// writes each output to w in input order. A line whose fn fails is passed
// to report (with its file and line number) and the run continues. When
// ctx is cancelled (a signal) Map stops reading, even while a read
// blocks, finishes the lines it has read, writes them, and returns ctx's
// error; it returns a write error (e.g. a closed stdout) as soon as one
// happens. report gets each failed line's error; sink, when not nil, the
// Output.Value of every line fn ran on (failed or not: a document can
// fail in part), both in input order and on Map's goroutine; a line's
// output is written only if sink returns true (measure drops duplicate
// records). A line that could not be read (too long) reaches report only.
// Whenever the input stalls (the next line is not yet buffered), w is
// flushed once every line read so far is written, so a live producer's
// results come out as they arrive.
//
// fn may write into line.Data and on over its spare capacity (memberRoom
// at least), but nothing may keep it past the line's sink: its buffer is
// used again once its output is written.
func Map[V any](ctx context.Context, r *jsonl.Reader, w *jsonl.Writer, workers int, fn Func[V], report func(error, Output[V]), sink func(V) bool) (Stats, error) {
	if workers < 1 {
		workers = 1
	}
	// stopRead is the caller's stop: no more lines are read; abort ends
	// everything (a write failed, or Map returns).
	stopRead := ctx
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// After a stop the reader hands out the lines already buffered, then
	// ends. If it is waiting in a read when the stop comes, it may never
	// return: the writer then waits for the dispatched lines only.
	var mu sync.Mutex
	dispatched, stopped, readerWaiting := 0, false, false
	jobs := make(chan job, workers*4)
	results := make(chan result[V], workers*4)
	// window bounds the lines between the reader and the in-order writer:
	// one slow line holds back at most this many finished ones in memory.
	window := make(chan struct{}, workers*16)
	// When the next read may block (no whole line buffered), the reader
	// tells the writer how many lines it has read; the writer flushes once
	// it has written those, so a slow input's results are not held back.
	var readSoFar atomic.Int64
	stalled := make(chan struct{}, 1)
	var readErr error
	go func() {
		defer close(jobs)
		for seq := 0; ; seq++ {
			buffered := r.LineBuffered()
			if seq > 0 && !buffered {
				readSoFar.Store(int64(seq))
				select {
				case stalled <- struct{}{}:
				default:
				}
			}
			mu.Lock()
			if stopped && !buffered {
				mu.Unlock()
				return
			}
			readerWaiting = !buffered
			mu.Unlock()
			line, err := r.Next()
			mu.Lock()
			late := stopped && readerWaiting // the writer no longer waits for it
			readerWaiting = false
			mu.Unlock()
			if late {
				return
			}
			var lineErr error
			switch {
			case errors.Is(err, jsonl.ErrLineTooLong):
				// A per-line failure (SetSkipLongLines): report it in order.
				lineErr = err
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				readErr = err
				return
			}
			// Next reuses its buffer. The copy has room for a member added at
			// its end in place (measure's isl), so that a line of megabytes
			// is not copied again for it.
			line.Data = append(lineBuffer(len(line.Data)+memberRoom), line.Data...)
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			mu.Lock()
			dispatched = seq + 1
			mu.Unlock()
			select {
			case jobs <- job{seq, line, lineErr}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var j job
				select {
				case jj, ok := <-jobs:
					if !ok {
						return
					}
					j = jj
				case <-ctx.Done():
					return
				}
				if j.err != nil {
					select {
					case results <- result[V]{j.seq, j.line, Output[V]{}, j.err, false}:
					case <-ctx.Done():
						return
					}
					continue
				}
				out, err := fn(j.line)
				select {
				case results <- result[V]{j.seq, j.line, out, err, true}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	var st Stats
	pending := map[int]result[V]{}
	next := 0
	var werr error
	flushAt := 0 // flush once next reaches it (0: no flush due)
	stop := stopRead.Done()
	wait := -1 // once stopped: the results to write before returning
	flush := func() {
		flushAt = 0
		if werr == nil {
			if werr = w.Flush(); werr != nil {
				cancel()
			}
		}
	}
loop:
	for {
		if wait >= 0 && next >= wait {
			break
		}
		var res result[V]
		select {
		case r, ok := <-results:
			if !ok {
				break loop
			}
			res = r
		case <-stop:
			stop = nil
			mu.Lock()
			stopped = true
			if readerWaiting {
				wait = dispatched
			}
			mu.Unlock()
			continue
		case <-stalled:
			if flushAt = int(readSoFar.Load()); next >= flushAt {
				flush()
			}
			continue
		}
		pending[res.seq] = res
		for {
			cur, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			<-window
			next++
			st.Lines++
			if cur.err != nil {
				st.Failed++
				var le *jsonl.LineError
				if errors.As(cur.err, &le) {
					report(cur.err, cur.out) // already names its file and line
				} else {
					report(&jsonl.LineError{File: cur.line.File, Line: cur.line.Num, Err: cur.err}, cur.out)
				}
			}
			if sink != nil && cur.ran && !sink(cur.out.Value) {
				cur.out.Lines = nil
			}
			for _, out := range cur.out.Lines {
				if werr != nil {
					break
				}
				if werr = w.WriteLine(out); werr != nil {
					cancel()
				}
			}
			recycle(cur.line.Data)
		}
		if flushAt > 0 && next >= flushAt {
			flush()
		}
		if werr != nil {
			break
		}
	}
	if werr != nil {
		return st, werr
	}
	mu.Lock()
	wasStopped := stopped
	mu.Unlock()
	if wasStopped {
		return st, stopRead.Err()
	}
	if readErr != nil {
		return st, readErr
	}
	return st, nil
}
