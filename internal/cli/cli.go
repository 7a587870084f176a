// Package cli holds what the commands share around their flags: parsing
// them from the arguments a command is given, exit codes, the one-line
// error report, signal handling and input files.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
)

// Exit codes shared by every tool.
const (
	ExitOK     = 0
	ExitFailed = 1 // a runtime failure, or some input lines failed
	ExitUsage  = 2 // bad flags, refused before any output
	// A signal exits with 128+signal (Interrupted.ExitCode).
)

// UsageError marks a bad invocation: refused before any output, exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ModelError marks a bad --now from model.Load as a usage error.
func ModelError(err error) error {
	var ne *model.NowError
	if errors.As(err, &ne) {
		return &UsageError{Err: err}
	}
	return err
}

// Fail prints "tool: err" on stderr and returns the exit code to use: 0
// for nil or a closed stdout, 2 for a UsageError, 128+signal for an
// interruption, else 1.
func Fail(stderr io.Writer, tool string, err error) int {
	if err == nil {
		return ExitOK
	}
	if jsonl.IsClosedPipe(err) {
		return ExitOK // `tool | head` is a normal way to stop a filter
	}
	fmt.Fprintf(stderr, "%s: %v\n", tool, err)
	var intr *Interrupted
	if errors.As(err, &intr) {
		return intr.ExitCode()
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailed
}

// Inputs opens the named files in order, or stdin when there are none or
// the name is "-". Each yields a jsonl.Reader named after its file; wrap,
// when not nil, may transform the raw stream first.
func Inputs(stdin io.Reader, names []string, wrap func(io.Reader) (io.Reader, error), each func(*jsonl.Reader) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	for _, name := range names {
		r := stdin
		label := "<stdin>"
		var f *os.File
		if name != "-" {
			var err error
			if f, err = os.Open(name); err != nil {
				return err
			}
			r, label = f, name
		}
		err := func() error {
			if wrap != nil {
				w, err := wrap(r)
				if err != nil {
					return fmt.Errorf("%s: %w", label, err)
				}
				r = w
			}
			return each(jsonl.NewReader(r, label))
		}()
		if f != nil {
			f.Close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Cause maps a cancelled context to the Interrupted error that carries the
// signal's exit code, and passes other errors through.
func Cause(ctx context.Context, err error) error {
	if intr, ok := InterruptedBy(ctx); ok && (err == nil || errors.Is(err, context.Canceled)) {
		return intr
	}
	return err
}
