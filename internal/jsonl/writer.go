package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	json "github.com/goccy/go-json"
)

// ErrClosedPipe reports that the reader of our output went away (EPIPE,
// a closed file). Commands treat it as a normal end: `compose | head -3`
// must exit 0 without a message. Match it with errors.Is.
var ErrClosedPipe = errors.New("jsonl: output closed by reader")

// IsClosedPipe reports whether err means the output's reader is gone.
func IsClosedPipe(err error) bool {
	return errors.Is(err, ErrClosedPipe) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed) ||
		errors.Is(err, io.ErrClosedPipe)
}

// flushThreshold is how many buffered bytes trigger a write. A write always
// ends at a line boundary, so a line larger than this goes out in one write.
const flushThreshold = 64 << 10

// Writer writes JSONL records. Each record is marshalled completely before
// it is buffered, and the underlying io.Writer only ever receives whole
// lines, so a failed marshal or an interrupted run never leaves half a
// record on the output. Writer is safe for concurrent use (send writes
// results from many workers); records are written in call order.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error // sticky: the first write error, returned by every later call
}

// NewWriter returns a Writer on w. Call Flush before exiting.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, flushThreshold)}
}

// Encode marshals v with go-json and writes it as one line. A value whose
// encoding fails is not written at all.
func (w *Writer) Encode(v any) error {
	e := encoders.Get().(*encoder)
	defer e.put()
	if err := e.enc.EncodeWithOption(v, json.DisableHTMLEscape()); err != nil {
		return fmt.Errorf("jsonl: encode %T: %w", v, err)
	}
	return w.WriteLine(e.buf.Bytes())
}

// encoder encodes into a reused buffer: MarshalWithOption's fresh copy of
// every record was a large part of send's own garbage per request.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

func (e *encoder) put() {
	if e.buf.Cap() > 1<<20 {
		return // one huge record: let it go
	}
	e.buf.Reset()
	encoders.Put(e)
}

// WriteLine writes an already-encoded JSON value as one line. It must not
// contain '\n' (a JSON encoder never emits one outside strings, where it is
// escaped); a trailing '\n' is not added twice.
func (w *Writer) WriteLine(line []byte) error {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		return fmt.Errorf("jsonl: record contains a newline at byte offset %d", i)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, line...)
	w.buf = append(w.buf, '\n')
	if len(w.buf) >= flushThreshold {
		return w.flushLocked()
	}
	return nil
}

// Flush writes every buffered line. A closed output is reported as an
// error matching ErrClosedPipe (and the original error).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if IsClosedPipe(err) {
			err = fmt.Errorf("%w: %w", ErrClosedPipe, err)
		} else {
			err = fmt.Errorf("jsonl: write: %w", err)
		}
		w.err = err
		return err
	}
	// Keep the capacity for the next batch unless one huge line grew it.
	if cap(w.buf) > 4*flushThreshold {
		w.buf = make([]byte, 0, flushThreshold)
	} else {
		w.buf = w.buf[:0]
	}
	return nil
}
