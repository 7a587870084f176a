package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cli"
)

// fakeSignals replaces measure's signals with contexts the test cancels:
// first delivers the first signal, now a SIGTERM or a second Ctrl-C.
func fakeSignals(t *testing.T) (first, now func(os.Signal)) {
	signalled, cancelSignalled := context.WithCancelCause(context.Background())
	stopNow, cancelNow := context.WithCancelCause(context.Background())
	old := signals
	signals = func() (cli.Stop, context.CancelFunc) {
		return cli.Stop{Signalled: signalled, Now: stopNow}, func() {}
	}
	// A loaded machine may take longer than the half second a stop
	// normally gets to finish the records read.
	oldGrace := cli.StopGrace
	cli.StopGrace = 10 * time.Second
	t.Cleanup(func() { signals, cli.StopGrace = old, oldGrace })
	return func(s os.Signal) { cancelSignalled(&cli.Interrupted{Signal: s}) },
		func(s os.Signal) { cancelNow(&cli.Interrupted{Signal: s}) }
}

// startMeasure runs measure on a pipe and returns the pipe's writer and
// the exit code to come.
func startMeasure(args []string, out, errb *bytes.Buffer) (*io.PipeWriter, chan int) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run(args, pr, out, errb) }()
	return pw, done
}

func exitCode(t *testing.T, done chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after the stop")
		return 0
	}
}

// chatLine is a request measure counts: {"role":"user","content":"Hi"}
// bare is 1 token ("Hi") for Qwen3.
const chatLine = `{"model":"m","messages":[{"role":"user","content":"Hi"}]}` + "\n"

// readSummary returns the requests of a --summary-json file.
func readSummary(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("summary not written: %v", err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary %q: %v", b, err)
	}
	n, _ := s["requests"].(float64)
	return n
}

// TestSignalWhileReading: a SIGTERM while measure waits inside a line of
// a FIFO that never goes on ends it with 143 having written the three
// whole records it read and the summary (issue 11 item 7; issue 27
// item 6: before, the records and the summary were lost).
func TestSignalWhileReading(t *testing.T) {
	first, now := fakeSignals(t)
	sum := filepath.Join(t.TempDir(), "s.json")
	var out, errb bytes.Buffer
	pw, done := startMeasure([]string{"--workers", "2", "--summary-json", sum}, &out, &errb)
	defer pw.Close()
	// io.Pipe is synchronous: once Write returns, measure has read it.
	pw.Write([]byte(strings.Repeat(chatLine, 3) + `{"model":"m","messages":[{"role":"user","content":"an unfinished li`))
	first(syscall.SIGTERM)
	now(syscall.SIGTERM)
	if code := exitCode(t, done); code != 143 {
		t.Errorf("exit %d, want 143; stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("wrote %d lines, want the 3 read: %q", len(lines), out.String())
	}
	for _, line := range lines {
		var v struct {
			ISL struct{ Bare int } `json:"isl"`
		}
		if json.Unmarshal([]byte(line), &v) != nil || v.ISL.Bare != 1 {
			t.Errorf("output line %q is not the measured record", line)
		}
	}
	if n := readSummary(t, sum); n != 3 {
		t.Errorf("summary counts %v requests, want 3", n)
	}
}

// TestCtrlCMeasuresWhatTheInputBrings: after a Ctrl-C measure reads its
// pipe on until it ends, as `send | measure` needs: send got the same
// Ctrl-C and writes its last records (cancelled requests) as it stops.
// Every record, the --summary table and the summary file are written and
// the exit status is 130 (issue 27, item 6).
func TestCtrlCMeasuresWhatTheInputBrings(t *testing.T) {
	first, _ := fakeSignals(t)
	sum := filepath.Join(t.TempDir(), "s.json")
	var out, errb bytes.Buffer
	pw, done := startMeasure([]string{"--summary", "--summary-json", sum}, &out, &errb)
	pw.Write([]byte(strings.Repeat(chatLine, 2)))
	first(os.Interrupt)
	pw.Write([]byte(chatLine)) // what the stage before writes as it stops
	pw.Close()
	if code := exitCode(t, done); code != 130 {
		t.Errorf("exit %d, want 130; stderr %q", code, errb.String())
	}
	if n := strings.Count(out.String(), `"isl"`); n != 3 {
		t.Errorf("wrote %d measured records, want 3: %q", n, out.String())
	}
	if n := readSummary(t, sum); n != 3 {
		t.Errorf("summary counts %v requests, want 3", n)
	}
	if !strings.Contains(errb.String(), "requests 3") {
		t.Errorf("no --summary table on stderr: %q", errb.String())
	}
}

// TestSecondCtrlCStopsNow: an input that does not end after the Ctrl-C is
// given up at the second one; the records read are written and so is the
// summary.
func TestSecondCtrlCStopsNow(t *testing.T) {
	first, now := fakeSignals(t)
	sum := filepath.Join(t.TempDir(), "s.json")
	var out, errb bytes.Buffer
	pw, done := startMeasure([]string{"--summary-json", sum}, &out, &errb)
	defer pw.Close()
	pw.Write([]byte(strings.Repeat(chatLine, 2)))
	first(os.Interrupt)
	now(os.Interrupt)
	if code := exitCode(t, done); code != 130 {
		t.Errorf("exit %d, want 130; stderr %q", code, errb.String())
	}
	if n := strings.Count(out.String(), `"isl"`); n != 2 {
		t.Errorf("wrote %d measured records, want 2: %q", n, out.String())
	}
	if n := readSummary(t, sum); n != 2 {
		t.Errorf("summary counts %v requests, want 2", n)
	}
}

// TestSummaryWhenWorkGivenUp: a stop that cannot wait for a record still
// being measured (a huge line, past cli.StopGrace) still writes the
// summary of what was measured, and whole lines only.
func TestSummaryWhenWorkGivenUp(t *testing.T) {
	first, now := fakeSignals(t)
	cli.StopGrace = time.Millisecond // set after fakeSignals, which restores it
	sum := filepath.Join(t.TempDir(), "s.json")
	var out, errb bytes.Buffer
	pw, done := startMeasure([]string{"--summary-json", sum, "--workers", "1"}, &out, &errb)
	defer pw.Close()
	// A text of 16 MiB of distinct words (no cache helps) takes seconds
	// to count.
	var big strings.Builder
	big.WriteString(`{"model":"m","messages":[{"role":"user","content":"`)
	for i := 0; big.Len() < 16<<20; i++ {
		fmt.Fprintf(&big, "w%d ", i*7919)
	}
	big.WriteString(`"}]}` + "\n")
	go pw.Write([]byte(chatLine + big.String()))
	// Long enough for the 16 MiB to be read (a memory copy), too short to
	// count them: the stop finds the big line in a worker.
	time.Sleep(500 * time.Millisecond)
	first(syscall.SIGTERM)
	now(syscall.SIGTERM)
	if code := exitCode(t, done); code != 143 {
		t.Errorf("exit %d, want 143; stderr %q", code, errb.String())
	}
	if n := readSummary(t, sum); n != 1 {
		t.Errorf("summary counts %v requests, want the one measured", n)
	}
}
