package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/version"
)

// Parse parses a command's arguments into flags, writing help to stdout
// and errors to stderr, never exiting the process. done reports that the
// command is over before it started: --help was printed (code 0) or the
// command line was refused with one line on stderr (code ExitUsage; kong's
// own default would be 80). Every tool gets --version.
func Parse(name string, args []string, stdout, stderr io.Writer, flags any, options ...kong.Option) (ctx *kong.Context, code int, done bool) {
	exit := -1
	opts := append([]kong.Option{kong.Name(name), kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { exit = c }),
		kong.Embed(&common{}), kong.Vars{"version": name + " " + version.Full()},
		kong.ValueFormatter(withDefault)}, options...)
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

// ExitStatus is the exit-status paragraph of every tool's --help.
const ExitStatus = `Exit status: 0 done (also when the reader of stdout went away, as with
| head); 1 a failure (failed lines or requests, unreadable input, an
unreachable server); 2 a usage error, refused before any output; 130 or
143 stopped by SIGINT or SIGTERM.`

// Description is a tool's --help text, the exit status appended.
func Description(text string) kong.Option {
	return kong.Description(strings.TrimRight(text, "\n") + "\n\n" + ExitStatus + "\n")
}

// withDefault adds a flag's default to its help, unless the help already
// speaks of it or it is a boolean's false.
func withDefault(v *kong.Value) string {
	h := kong.DefaultHelpValueFormatter(v)
	if v.Default == "" || (v.IsBool() && v.Default == "false") || strings.Contains(strings.ToLower(v.OrigHelp), "default") {
		return h
	}
	return h + " (default: " + v.Default + ")"
}

// common are the flags every tool has.
type common struct {
	Version kong.VersionFlag `help:"Print the version (module version and VCS revision, or dev) and exit."`
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
