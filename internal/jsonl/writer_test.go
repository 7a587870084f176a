package jsonl

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// recorder keeps each Write call separately, to check that writes end at
// line boundaries.
type recorder struct {
	writes [][]byte
	err    error
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func TestWriterWholeLines(t *testing.T) {
	rec := &recorder{}
	w := NewWriter(rec)
	var want bytes.Buffer
	for i := range 3000 {
		v := map[string]any{"i": i, "t": strings.Repeat("z", i%97), "sep": "a\u2028b"}
		if err := w.Encode(v); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&want, `{"i":%d,"sep":"a\u2028b","t":"%s"}`+"\n", i, strings.Repeat("z", i%97))
	}
	big := strings.Repeat("B", 3*flushThreshold)
	if err := w.Encode(map[string]string{"big": big}); err != nil {
		t.Fatal(err)
	}
	want.WriteString(`{"big":"` + big + `"}` + "\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) < 2 {
		t.Fatalf("expected several writes, got %d", len(rec.writes))
	}
	var all []byte
	for i, p := range rec.writes {
		if len(p) == 0 || p[len(p)-1] != '\n' {
			t.Fatalf("write %d does not end at a line boundary", i)
		}
		all = append(all, p...)
	}
	if !bytes.Equal(all, want.Bytes()) {
		t.Fatal("output differs from the expected lines")
	}
}

func TestWriterMarshalFailureWritesNothing(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if err := w.Encode(map[string]any{"ok": 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Encode(map[string]any{"bad": make(chan int)}); err == nil {
		t.Fatal("want marshal error")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"ok\":1}\n" {
		t.Fatalf("out = %q", out.String())
	}
}

func TestWriteLine(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if err := w.WriteLine([]byte(`{"a":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLine([]byte("{\n}")); err == nil {
		t.Fatal("want error for embedded newline")
	}
	_ = w.Flush()
	if out.String() != "{\"a\":1}\n" {
		t.Fatalf("out = %q", out.String())
	}
}

func TestWriterClosedPipe(t *testing.T) {
	for _, cause := range []error{
		&os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE},
		os.ErrClosed,
		io.ErrClosedPipe,
	} {
		w := NewWriter(&recorder{err: cause})
		_ = w.Encode(1)
		err := w.Flush()
		if !errors.Is(err, ErrClosedPipe) || !errors.Is(err, cause) || !IsClosedPipe(err) {
			t.Errorf("cause %v: Flush = %v", cause, err)
		}
		// Sticky: later calls report the same condition, not a new write.
		if err2 := w.Encode(2); !errors.Is(err2, ErrClosedPipe) {
			t.Errorf("Encode after close = %v", err2)
		}
	}
	other := errors.New("disk full")
	w := NewWriter(&recorder{err: other})
	_ = w.Encode(1)
	err := w.Flush()
	if errors.Is(err, ErrClosedPipe) || !errors.Is(err, other) || IsClosedPipe(err) {
		t.Errorf("disk full: Flush = %v", err)
	}
}

// TestWriterRealPipe closes the read end of an OS pipe and checks that the
// EPIPE from the kernel is recognised (SIGPIPE is ignored by cli.HandleSignals;
// the runtime only raises it for fds 1 and 2 anyway).
func TestWriterRealPipe(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Skip(err)
	}
	defer pw.Close()
	pr.Close()
	w := NewWriter(pw)
	_ = w.Encode("x")
	if err := w.Flush(); !errors.Is(err, ErrClosedPipe) {
		t.Fatalf("Flush to closed pipe = %v", err)
	}
}

func TestWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_ = w.Encode(map[string]int{"g": g, "i": i})
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&out, "out")
	n := 0
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		var v map[string]int
		if err != nil || l.Decode(&v) != nil {
			t.Fatalf("line %d corrupt: %q", l.Num, l.Data)
		}
		n++
	}
	if n != 8*500 {
		t.Fatalf("%d lines", n)
	}
}

// TestEncodeReusedBuffer: records encoded through the pooled buffer come
// out as encoding/json writes them without HTML escaping, one per line,
// and a value that fails to encode leaves nothing behind for the next.
func TestEncodeReusedBuffer(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	vals := []any{map[string]string{"a": "<b>&\u2028"}, struct {
		N int    `json:"n"`
		S string `json:"s,omitempty"`
	}{N: 7}, []int{1, 2}}
	var want bytes.Buffer
	for i, v := range vals {
		if i == 1 {
			if err := w.Encode(map[string]any{"c": make(chan int)}); err == nil {
				t.Fatal("a channel encoded")
			}
		}
		if err := w.Encode(v); err != nil {
			t.Fatal(err)
		}
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want.String())
	}
}
