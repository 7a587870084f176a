package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestHandleSignals(t *testing.T) {
	ctx, stop := HandleSignals(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Skip(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled by SIGINT")
	}
	in, ok := InterruptedBy(ctx)
	if !ok || in.Signal != os.Interrupt || in.ExitCode() != 130 {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
	stop()
	stop() // idempotent

	ctx2, stop2 := HandleSignals(context.Background())
	stop2()
	if _, ok := InterruptedBy(ctx2); ok || ctx2.Err() == nil {
		t.Fatal("stop should cancel without an Interrupted cause")
	}
}

// TestHandleStopSignals: the first Ctrl-C only marks the run signalled (a
// filter reads on until its input ends); the second stops it now. The
// exit code is the first signal's.
func TestHandleStopSignals(t *testing.T) {
	st, stop := HandleStopSignals(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Skip(err)
	}
	select {
	case <-st.Signalled.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Signalled not cancelled by SIGINT")
	}
	time.Sleep(50 * time.Millisecond)
	if st.Now.Err() != nil {
		t.Fatal("the first SIGINT stopped the reading")
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-st.Now.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Now not cancelled by the second SIGINT")
	}
	if in, ok := InterruptedBy(st.Signalled); !ok || in.ExitCode() != 130 {
		t.Errorf("cause %v, want SIGINT", context.Cause(st.Signalled))
	}

	// A SIGTERM stops at once.
	st2, stop2 := HandleStopSignals(context.Background())
	defer stop2()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-st2.Now.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Now not cancelled by SIGTERM")
	}
	if in, ok := InterruptedBy(st2.Signalled); !ok || in.ExitCode() != 143 {
		t.Errorf("cause %v, want SIGTERM", context.Cause(st2.Signalled))
	}
}
