package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/jsonl"
)

func TestMapKeepsInputOrderAndReportsFailures(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&in, "%d\n", i)
	}
	var out bytes.Buffer
	w := jsonl.NewWriter(&out)
	var reported []string
	last, sunk := -1, 0
	st, err := Map(context.Background(), jsonl.NewReader(strings.NewReader(in.String()), "in"), w, 8,
		func(line jsonl.Line) (Output[int], error) {
			n, _ := strconv.Atoi(string(line.Data))
			time.Sleep(time.Duration(n%7) * 50 * time.Microsecond) // finish out of order
			if n%100 == 99 {
				return Output[int]{Value: n}, errors.New("boom")
			}
			if n == 3 {
				return Output[int]{Lines: [][]byte{[]byte("3a"), []byte("3b")}, Value: n}, nil
			}
			return Output[int]{Lines: [][]byte{line.Data}, Value: n}, nil
		}, func(err error, _ Output[int]) { reported = append(reported, err.Error()) },
		func(n int) bool {
			sunk++
			if n < last {
				t.Errorf("sink got %d after %d", n, last)
			} else {
				last = n
			}
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if st.Lines != 500 || st.Failed != 5 {
		t.Errorf("stats %+v, want 500 lines, 5 failed", st)
	}
	if sunk != 500 {
		t.Errorf("sink got %d values, want one per line (500)", sunk)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 496 || lines[3] != "3a" || lines[4] != "3b" || lines[5] != "4" || lines[len(lines)-1] != "498" {
		t.Errorf("output %d lines: %q ... %q", len(lines), lines[:6], lines[len(lines)-1])
	}
	if len(reported) != 5 || reported[0] != "in:100: boom" {
		t.Errorf("reported %q", reported)
	}
}

// errWriter fails every write, like a closed stdout.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("write: broken pipe") }

func TestMapStopsOnWriteError(t *testing.T) {
	in := strings.Repeat("{}\n", 200000)
	w := jsonl.NewWriter(errWriter{})
	done := make(chan error, 1)
	go func() {
		_, err := Map(context.Background(), jsonl.NewReader(strings.NewReader(in), "in"), w, 2,
			func(line jsonl.Line) (Output[int], error) {
				return Output[int]{Lines: [][]byte{bytes.Repeat([]byte("x"), 1024)}}, nil
			},
			func(error, Output[int]) {}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Map returned nil after the writer failed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Map did not stop after the writer failed")
	}
}

// TestMapBoundsHeldLines: while the first line is slow, only a bounded
// number of later lines is read and held, not the whole input.
func TestMapBoundsHeldLines(t *testing.T) {
	const workers, lines = 2, 20000
	in := strings.Repeat("x\n", lines)
	release := make(chan struct{})
	var started atomic.Int64
	done := make(chan Stats)
	go func() {
		st, _ := Map(context.Background(), jsonl.NewReader(strings.NewReader(in), "in"), jsonl.NewWriter(io.Discard), workers,
			func(line jsonl.Line) (Output[int], error) {
				if line.Num == 1 {
					<-release
				} else {
					started.Add(1)
				}
				return Output[int]{Lines: [][]byte{line.Data}}, nil
			}, func(error, Output[int]) {}, nil)
		done <- st
	}()
	time.Sleep(200 * time.Millisecond) // unbounded, it would read them all by now
	if n := started.Load(); n >= workers*16 {
		t.Errorf("%d lines processed while the first was held, want fewer than %d", n, workers*16)
	}
	close(release)
	if st := <-done; st.Lines != lines {
		t.Errorf("%d lines written, want %d", st.Lines, lines)
	}
}

// TestMapUnreadableLineReachesReportOnly: a line too long to read is
// reported in its place, and the sink sees only the lines fn ran on.
func TestMapUnreadableLineReachesReportOnly(t *testing.T) {
	r := jsonl.NewReader(strings.NewReader("1\n"+strings.Repeat("9", 100)+"\n3\n"), "in")
	r.SetMaxLineSize(10)
	r.SetSkipLongLines(true)
	var reported []string
	var sunk []int
	st, err := Map(context.Background(), r, jsonl.NewWriter(io.Discard), 2,
		func(line jsonl.Line) (Output[int], error) {
			n, _ := strconv.Atoi(string(line.Data))
			return Output[int]{Value: n}, nil
		}, func(err error, _ Output[int]) { reported = append(reported, err.Error()) },
		func(n int) bool { sunk = append(sunk, n); return true })
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 3 || st.Failed != 1 || len(reported) != 1 || !strings.HasPrefix(reported[0], "in:2:") {
		t.Errorf("stats %+v, reported %q; want 3 lines, line 2 failed", st, reported)
	}
	if fmt.Sprint(sunk) != "[1 3]" {
		t.Errorf("sink got %v, want [1 3]", sunk)
	}
}

// Each line reaches fn with room for a member written in place, and its
// buffer is used again only after its output is written: outputs written
// into their lines' own buffers, out of order, all come out whole.
func TestMapLineBuffersWrittenInPlace(t *testing.T) {
	var in, want strings.Builder
	for i := 0; i < 2000; i++ {
		line := strings.Repeat(strconv.Itoa(i), 1+i%300)
		fmt.Fprintf(&in, "%s\n", line)
		fmt.Fprintf(&want, "%s+%d\n", line, i)
	}
	var out bytes.Buffer
	w := jsonl.NewWriter(&out)
	n := atomic.Int64{}
	_, err := Map(context.Background(), jsonl.NewReader(strings.NewReader(in.String()), "in"), w, 4,
		func(line jsonl.Line) (Output[int], error) {
			if cap(line.Data)-len(line.Data) < memberRoom {
				t.Errorf("line %d: %d bytes of room, want %d", line.Num, cap(line.Data)-len(line.Data), memberRoom)
			}
			i := n.Add(1)
			time.Sleep(time.Duration(i%5) * 20 * time.Microsecond) // finish out of order
			data := append(line.Data, fmt.Sprintf("+%d", line.Num-1)...)
			if &data[0] != &line.Data[0] {
				t.Errorf("line %d: appending moved it", line.Num)
			}
			return Output[int]{Lines: [][]byte{data}}, nil
		}, func(err error, _ Output[int]) { t.Error(err) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatal("the output differs from its lines with their members")
	}
}
