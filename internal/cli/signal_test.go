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
