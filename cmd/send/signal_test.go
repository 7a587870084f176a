package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cli"
)

// interrupted makes the command see a SIGINT already delivered.
func interrupted(t *testing.T) {
	t.Helper()
	old := signals
	signals = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&cli.Interrupted{Signal: syscall.SIGINT})
		return ctx, func() {}
	}
	t.Cleanup(func() { signals = old })
}

// runBounded runs the command and fails the test, instead of hanging, if
// it does not return (the bound is no speed goal: the point is returning).
func runBounded(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, stdin, &out, &errb) }()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(20 * time.Second):
		t.Fatalf("%v: still running 20 s after the signal", args)
		return 0, "", ""
	}
}

// TestSignalWhileReadingInput: a signal while send waits on a FIFO that
// never writes (or stops inside a line) ends it with 130 and no output
// (issue 11 item 7).
func TestSignalWhileReadingInput(t *testing.T) {
	interrupted(t)
	for _, partial := range []string{"", convLine[:40]} {
		for _, args := range [][]string{{"--dry-run"}, {"--url", "http://127.0.0.1:1"}} {
			pr, pw := io.Pipe()
			go pw.Write([]byte(partial))
			code, out, errs := runBounded(t, pr, args...)
			pw.Close()
			if code != 130 || out != "" || !strings.Contains(errs, "interrupt") {
				t.Errorf("%v after %q: exit %d, out %q, stderr %q; want 130 and nothing written", args, partial, code, out, errs)
			}
		}
	}
}
