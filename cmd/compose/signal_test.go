package main

import (
	"bytes"
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cli"
)

// TestSignalWhileReadingProbe: a signal while compose waits for its probe
// record on a FIFO that never writes ends it with 130 (issue 11 item 7).
func TestSignalWhileReadingProbe(t *testing.T) {
	old := signals
	signals = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&cli.Interrupted{Signal: syscall.SIGINT})
		return ctx, func() {}
	}
	defer func() { signals = old }()
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"--isl", "50"}, pr, &out, &errb) }()
	select {
	case code := <-done:
		if code != 130 || out.Len() != 0 {
			t.Errorf("exit %d, out %q, stderr %q; want 130", code, out.String(), errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after the signal")
	}
}
