package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/jsonl"
)

// lineCounter is an output that tells how many lines reached it.
type lineCounter struct {
	mu    sync.Mutex
	lines int
	seen  chan int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.lines += bytes.Count(p, []byte("\n"))
	n := c.lines
	c.mu.Unlock()
	select {
	case c.seen <- n:
	default:
	}
	return len(p), nil
}

// TestMapFlushesWhenInputStalls: in a live `send | measure`, results must
// reach the output as they come, not when 64 KiB have piled up or the input
// ends (issue 11, item 8). The input is a pipe that delivers 10 lines and
// then stays open; all 10 results must be written while it waits.
func TestMapFlushesWhenInputStalls(t *testing.T) {
	pr, pw := io.Pipe()
	out := &lineCounter{seen: make(chan int, 100)}
	w := jsonl.NewWriter(out)
	done := make(chan error, 1)
	go func() {
		_, err := Map(context.Background(), jsonl.NewReader(pr, "in"), w, 4,
			func(line jsonl.Line) (Output[struct{}], error) {
				return Output[struct{}]{Lines: [][]byte{line.Data}}, nil
			}, func(error, Output[struct{}]) {}, nil)
		done <- err
	}()
	for i := 0; i < 10; i++ {
		fmt.Fprintf(pw, "{\"n\":%d}\n", i)
	}
	// Not a timing assertion: the deadline only turns a hang into a failure.
	deadline := time.After(30 * time.Second)
	for n := 0; n < 10; {
		select {
		case n = <-out.seen:
		case <-deadline:
			out.mu.Lock()
			n := out.lines
			out.mu.Unlock()
			pw.Close()
			t.Fatalf("%d of 10 lines written while the input waits", n)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMapStopFinishesLinesRead: a stop (Ctrl-C) while the input waits
// must not lose the lines already read: Map finishes them, writes them and
// returns the context's error, although the read never returns (issue 27,
// item 6). Each line takes a while to process, so the stop comes while
// most are still in the workers.
func TestMapStopFinishesLinesRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	read := make(chan struct{}, 100)
	done := make(chan error, 1)
	var got []int
	go func() {
		_, err := Map(ctx, jsonl.NewReader(pr, "in"), w, 4,
			func(line jsonl.Line) (Output[int], error) {
				read <- struct{}{}
				time.Sleep(50 * time.Millisecond)
				return Output[int]{Lines: [][]byte{line.Data}, Value: line.Num}, nil
			}, func(error, Output[int]) {}, func(n int) bool { got = append(got, n); return true })
		done <- err
	}()
	for i := 0; i < 6; i++ {
		fmt.Fprintf(pw, "{\"n\":%d}\n", i)
	}
	for i := 0; i < 6; i++ {
		<-read // every line has reached a worker
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Map returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Map still waiting for the input after the stop")
	}
	w.Flush()
	want := "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n"
	if buf.String() != want {
		t.Errorf("wrote %q, want every line read: %q", buf.String(), want)
	}
	if fmt.Sprint(got) != "[1 2 3 4 5 6]" {
		t.Errorf("sink got lines %v, want 1..6", got)
	}
}
