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
)

// Exit codes shared by every tool.
const (
	ExitOK     = 0
	ExitFailed = 1 // a runtime failure, or some input lines failed
	ExitUsage  = 2 // bad flags, refused before any output
	// A signal exits with 128+signal (Interrupted.ExitCode).
)

// UsageError marks a bad invocation: a bad flag, a bad combination of
// flags, or a model other than the one the records name. It is refused
// before any output and exits 2. It is the one usage-error type: library
// packages (compose, model, send) return it too.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// Usage marks err as a usage error (nil stays nil).
func Usage(err error) error {
	if err == nil || IsUsage(err) {
		return err
	}
	return &UsageError{err}
}

// IsUsage reports whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// OnlyWith refuses the first of names (flags without their dashes) given
// on the command line while the mode they apply to is off: "--NAME
// applies MODE only", then why, when it is not "" (mode says it with its
// preposition: "to a live run", "with --exact", "without --trace"). It is
// the one check of "flag X only applies with Y" of every tool.
func OnlyWith(given map[string]bool, on bool, mode, why string, names ...string) error {
	if on {
		return nil
	}
	for _, name := range names {
		if given[name] {
			if why != "" {
				return Usagef("--%s applies %s only: %s", name, mode, why)
			}
			return Usagef("--%s applies %s only", name, mode)
		}
	}
	return nil
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
