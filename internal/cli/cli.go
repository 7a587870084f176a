// Package cli holds what the four commands share around their flags:
// exit codes, the one-line error report, input files and model loading.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/modelsrc"
)

// Exit codes shared by every tool.
const (
	ExitOK     = 0
	ExitFailed = 1 // a runtime failure, or some input lines failed
	ExitUsage  = 2 // bad flags, refused before any output
	// A signal exits with 128+signal (jsonl.Interrupted.ExitCode).
)

// Fail prints "tool: err" on stderr and returns the exit code to use.
func Fail(tool string, err error) int {
	if err == nil {
		return ExitOK
	}
	if jsonl.IsClosedPipe(err) {
		return ExitOK // `tool | head` is a normal way to stop a filter
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", tool, err)
	var intr *jsonl.Interrupted
	if errors.As(err, &intr) {
		return intr.ExitCode()
	}
	return ExitFailed
}

// Inputs opens the named files in order, or stdin when there are none or
// the name is "-". Each yields a jsonl.Reader named after its file; wrap,
// when not nil, may transform the raw stream first.
func Inputs(names []string, wrap func(io.Reader) (io.Reader, error), each func(*jsonl.Reader) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	for _, name := range names {
		var r io.Reader = os.Stdin
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

// Model bundles what --tokenizer, --chat-template and --now resolve to.
type Model struct {
	Source *modelsrc.Source
	// Template is nil when the model has no chat template (and none was
	// given with --chat-template).
	Template *chat.Template
	Now      time.Time
}

// LoadModel resolves the model flags shared by the tools. With
// needTemplate false no template work happens at all.
func LoadModel(tokenizerSpec, chatTemplate, now string, needTemplate bool) (*Model, error) {
	src, err := modelsrc.Resolve(tokenizerSpec)
	if err != nil {
		return nil, err
	}
	if _, err := src.Tokenizer(); err != nil {
		return nil, err
	}
	m := &Model{Source: src}
	if m.Now, err = chat.ResolveNow(now); err != nil {
		return nil, err
	}
	if !needTemplate {
		return m, nil
	}
	tmpl, err := chat.LoadFS(src.FS, chatTemplate)
	switch {
	case errors.Is(err, chat.ErrNoTemplate):
	case err != nil:
		return nil, fmt.Errorf("%s: chat template: %w", src.Name, err)
	default:
		m.Template = tmpl
	}
	return m, nil
}

// Signals returns a context cancelled by Ctrl-C / SIGTERM.
func Signals() (context.Context, context.CancelFunc) {
	return jsonl.HandleSignals(context.Background())
}

// Cause maps a cancelled context to the Interrupted error that carries the
// signal's exit code, and passes other errors through.
func Cause(ctx context.Context, err error) error {
	if intr, ok := jsonl.InterruptedBy(ctx); ok && (err == nil || errors.Is(err, context.Canceled)) {
		return intr
	}
	return err
}

// Parse parses the command line into flags; a bad command line prints one
// line and exits with ExitUsage (kong's own default would be 80).
func Parse(name string, flags any, options ...kong.Option) *kong.Context {
	parser := kong.Must(flags, append([]kong.Option{kong.Name(name)}, options...)...)
	ctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v (see %s --help)\n", name, err, name)
		os.Exit(ExitUsage)
	}
	return ctx
}

// WriteFile replaces path atomically, so a failed run never leaves half a
// report behind.
func WriteFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
