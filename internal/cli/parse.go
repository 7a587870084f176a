package cli

import (
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// Parse parses a command's arguments into flags, writing help to stdout
// and errors to stderr, never exiting the process. done reports that the
// command is over before it started: --help was printed (code 0) or the
// command line was refused with one line on stderr (code ExitUsage; kong's
// own default would be 80).
func Parse(name string, args []string, stdout, stderr io.Writer, flags any, options ...kong.Option) (ctx *kong.Context, code int, done bool) {
	exit := -1
	opts := append([]kong.Option{kong.Name(name), kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { exit = c })}, options...)
	parser, err := kong.New(flags, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, ExitUsage, true
	}
	ctx, err = parser.Parse(args)
	if exit >= 0 { // --help
		return nil, exit, true
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", name, err, name)
		return nil, ExitUsage, true
	}
	return ctx, ExitOK, false
}

// Given lists the flags spelled out on the command line, by name: kong's
// Value.Set is also true for defaults and environment variables, the
// parse path is not.
func Given(ctx *kong.Context) map[string]bool {
	set := map[string]bool{}
	for _, p := range ctx.Path {
		if p.Flag != nil {
			set[p.Flag.Name] = true
		}
	}
	return set
}
