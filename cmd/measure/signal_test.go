package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cli"
)

// TestSignalWhileReading: a signal while measure waits inside a line of a
// FIFO that never goes on ends it with 143 (SIGTERM), having written
// whole lines only (issue 11 item 7). How many of the three records it
// read are written by then depends on the workers' timing, so any number
// of whole records passes.
func TestSignalWhileReading(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	old := signals
	signals = func() (context.Context, context.CancelFunc) { return ctx, func() {} }
	defer func() { signals = old }()

	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"--workers", "2"}, pr, &out, &errb) }()
	// io.Pipe is synchronous: once Write returns, measure has read it.
	pw.Write([]byte(strings.Repeat(`{"text":"Hello world"}`+"\n", 3) + `{"text":"an unfinished li`))
	cancel(&cli.Interrupted{Signal: syscall.SIGTERM})
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after the signal")
	}
	if code != 143 {
		t.Errorf("exit %d, want 143; stderr %q", code, errb.String())
	}
	if o := out.String(); o != "" && !strings.HasSuffix(o, "\n") {
		t.Errorf("output ends inside a line: %q", o)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var v map[string]any
		if line != "" && (json.Unmarshal([]byte(line), &v) != nil || v["tokens"] != float64(2)) {
			t.Errorf("output line %q is not a whole record", line)
		}
	}
}
