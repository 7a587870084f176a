package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// DefaultMaxLineSize is the longest line, in bytes and without its line
// ending, that a Reader accepts unless told otherwise. 256 MiB fits a
// conversation with long multimodal history while still bounding memory
// when the input is not JSONL at all (a binary file has no newlines).
const DefaultMaxLineSize = 256 << 20

// readBufferSize is the bufio buffer; lines longer than it are assembled
// from several reads, so it bounds syscall count, not line length.
const readBufferSize = 64 << 10

var utf8BOM = []byte("\ufeff")

// ErrLineTooLong is wrapped by the error a Reader returns for a line over
// its maximum size.
var ErrLineTooLong = errors.New("line too long")

// Line is one non-blank input line.
type Line struct {
	File string // name of the input, as given to NewReader
	Num  int    // 1-based physical line number, counting skipped blank lines
	// Data is the line without its '\n' or "\r\n" ending. It is only valid
	// until the next call to Reader.Next; copy it to keep it.
	Data []byte
}

// Reader yields the non-blank lines of a JSONL stream. It is not safe for
// concurrent use.
type Reader struct {
	name    string
	br      *bufio.Reader
	maxSize int
	num     int
	buf     []byte
	err     error // sticky: once a read fails, every later Next returns it
	// skipLong turns an oversized line into a per-line error.
	skipLong bool
}

// NewReader reads JSONL from r; name (a file name, or "-"/"<stdin>") is used
// in error messages only.
func NewReader(r io.Reader, name string) *Reader {
	return newReaderSize(r, name, readBufferSize)
}

// newReaderSize lets tests use a tiny buffer so that short inputs exercise
// the path that assembles a line from several reads.
func newReaderSize(r io.Reader, name string, size int) *Reader {
	return &Reader{
		name:    name,
		br:      bufio.NewReaderSize(r, size),
		maxSize: DefaultMaxLineSize,
	}
}

// SetMaxLineSize changes the longest accepted line (bytes, without the line
// ending). n <= 0 restores DefaultMaxLineSize. Call it before the first Next.
func (r *Reader) SetMaxLineSize(n int) {
	if n <= 0 {
		n = DefaultMaxLineSize
	}
	r.maxSize = n
}

// SetSkipLongLines makes a line over the maximum size a per-line error:
// Next skips it (reading on to its end without keeping it) and returns the
// error once, and the next call carries on with the following line.
// Without it the error ends the input, as any read error does.
func (r *Reader) SetSkipLongLines(skip bool) { r.skipLong = skip }

// LineBuffered reports whether the next line is already buffered, so that
// Next returns without reading from the input (which may block). Callers
// flush what they have done before a read that may wait, so that a slow
// producer's results still come out as they arrive.
func (r *Reader) LineBuffered() bool {
	if r.err != nil {
		return true
	}
	b, _ := r.br.Peek(r.br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// Next returns the next non-blank line. At the end of the input it returns
// io.EOF; any other error is a *LineError naming the file and line.
func (r *Reader) Next() (Line, error) {
	for r.err == nil {
		data, err := r.readLine()
		if err != nil {
			if r.skipLong && errors.Is(err, ErrLineTooLong) {
				if derr := r.discardLine(); derr != nil {
					r.err = derr
				}
				return Line{File: r.name, Num: r.num}, err
			}
			r.err = err
			break
		}
		if r.num == 1 {
			// A byte order mark at the start of a file is no part of the
			// first record (Python reads such files as utf-8-sig).
			data = bytes.TrimPrefix(data, utf8BOM)
		}
		if isBlank(data) {
			continue
		}
		return Line{File: r.name, Num: r.num, Data: data}, nil
	}
	return Line{}, r.err
}

// readLine reads one physical line into r.buf. It returns io.EOF only when
// no byte at all was left, so a final line without '\n' is still a line.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		switch {
		case err == nil: // r.buf ends with '\n'
			r.num++
			return r.trimEnding(r.buf)
		case errors.Is(err, bufio.ErrBufferFull):
			// Give up as soon as the line cannot fit, instead of buffering
			// a whole oversized line (or a whole newline-free binary file).
			// One extra byte is allowed for a '\r' that a '\n' may follow.
			if len(r.buf) > r.maxSize+1 {
				r.num++
				return nil, r.tooLong()
			}
		case err == io.EOF:
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			r.num++
			return r.trimEnding(r.buf)
		default:
			return nil, &LineError{File: r.name, Line: r.num + 1, Err: fmt.Errorf("read: %w", err)}
		}
	}
}

// discardLine reads on to the end of the current (oversized) line, unless
// readLine already consumed its '\n'.
func (r *Reader) discardLine() error {
	if len(r.buf) > 0 && r.buf[len(r.buf)-1] == '\n' {
		return nil
	}
	for {
		_, err := r.br.ReadSlice('\n')
		switch {
		case err == nil, err == io.EOF:
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return &LineError{File: r.name, Line: r.num, Err: fmt.Errorf("read: %w", err)}
		}
	}
}

func (r *Reader) tooLong() error {
	return &LineError{File: r.name, Line: r.num,
		Err: fmt.Errorf("%w: more than %d bytes (the maximum line size)", ErrLineTooLong, r.maxSize)}
}

func (r *Reader) trimEnding(b []byte) ([]byte, error) {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) > r.maxSize {
		return nil, r.tooLong()
	}
	return b, nil
}

// isBlank reports whether a line holds only JSON whitespace other than
// '\n' (which cannot occur inside a line).
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// CheckUTF8 returns nil when l.Data is valid UTF-8, else a *LineError that
// names the byte offset (0-based, within the line) of the first bad byte.
// JSON decoders replace invalid bytes with U+FFFD silently, which would
// change token counts, so tools that count tokens check first.
func (l Line) CheckUTF8() error {
	if utf8.Valid(l.Data) {
		return nil
	}
	off := 0
	for off < len(l.Data) {
		r, size := utf8.DecodeRune(l.Data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return &LineError{File: l.File, Line: l.Num,
		Err: fmt.Errorf("invalid UTF-8 at byte offset %d (byte 0x%02x)", off, l.Data[off])}
}
