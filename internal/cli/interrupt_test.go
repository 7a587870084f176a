package cli

import (
	"bytes"
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestInterruptible: work that returns is waited for; work that never
// returns is given up once the context ends, with the signal as the cause.
func TestInterruptible(t *testing.T) {
	if abandoned, err := Interruptible(context.Background(), func() error { return errors.New("x") }); abandoned || err == nil || err.Error() != "x" {
		t.Errorf("err %v, abandoned %v", err, abandoned)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Interrupted{Signal: syscall.SIGTERM})
	block := make(chan struct{})
	defer close(block)
	abandoned, err := Interruptible(ctx, func() error { <-block; return nil })
	var in *Interrupted
	if !abandoned || !errors.As(err, &in) || in.ExitCode() != 143 {
		t.Errorf("err %v, abandoned %v; want the SIGTERM", err, abandoned)
	}
	// Work that stops by itself within the grace period is waited for (a
	// long grace here: a loaded machine may take a while to schedule it).
	defer func(g time.Duration) { StopGrace = g }(StopGrace)
	StopGrace = time.Minute
	if abandoned, err := Interruptible(ctx, func() error { return errors.New("stopped") }); abandoned || err == nil || err.Error() != "stopped" {
		t.Errorf("err %v, abandoned %v", err, abandoned)
	}
}

// TestOutputClose: after Close nothing reaches the writer, and the error
// reads as a closed output.
func TestOutputClose(t *testing.T) {
	var b bytes.Buffer
	o := NewOutput(&b)
	o.Write([]byte("a\n"))
	o.Close()
	if _, err := o.Write([]byte("b\n")); Quiet(err) != nil || b.String() != "a\n" {
		t.Errorf("after Close: err %v, written %q", err, b.String())
	}
}
