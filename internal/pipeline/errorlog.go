package pipeline

import (
	"fmt"
	"io"
)

// MaxErrors is how many per-line errors an ErrorLog prints; a file of bad
// lines then shows what is wrong without burying the terminal.
const MaxErrors = 20

// ErrorLog prints per-line errors as "tool: err", the first MaxErrors of
// them, and on Close how many more there were. It is not safe for
// concurrent use (Map calls its report function on one goroutine).
type ErrorLog struct {
	w       io.Writer
	tool    string
	n       int
	omitted int
}

// NewErrorLog returns an ErrorLog writing to w (stderr).
func NewErrorLog(w io.Writer, tool string) *ErrorLog { return &ErrorLog{w: w, tool: tool} }

// Report prints err, or counts it once MaxErrors were printed.
func (l *ErrorLog) Report(err error) {
	l.n++
	if l.n > MaxErrors {
		l.omitted++
		return
	}
	fmt.Fprintf(l.w, "%s: %v\n", l.tool, err)
}

// Close prints the count of errors not shown, if any.
func (l *ErrorLog) Close() {
	if l.omitted > 0 {
		fmt.Fprintf(l.w, "%s: ... and %d more line error(s) not shown\n", l.tool, l.omitted)
		l.omitted = 0
	}
}
