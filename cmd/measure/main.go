// Command measure counts the tokens of JSONL records: the last filter of
// probe | compose | send | measure.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/pipeline"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
)

const description = `Count tokens exactly as the model server does.

Reads JSONL records (files, or stdin) and writes each one back with its
token count added, in input order:

  {"text": "..."}         -> "tokens" (and "ids" with --ids): the text
                             encoded without special tokens
  requests                -> "isl": send records, OpenAI chat bodies
                             ("model" + "messages"), AIPerf
                             profile_export_raw.jsonl records ("payload")
                             and AIPerf inputs.json ({"data": [...]}, one
                             output record per payload). "isl" holds the
                             bare count (AIPerf's default), the templated
                             count (--apply-chat-template), the server's
                             usage.prompt_tokens, compose's target, and the
                             gaps between them split by cause.
  {"messages": [...]}     -> "tokens": with --apply-chat-template, the
                             messages rendered through the model's chat
                             template (add_generation_prompt defaults to
                             true; "tools" and "chat_template_kwargs" are
                             passed to the template), then encoded; without
                             it, or for a model without a template, the
                             text parts joined by one space (AIPerf's bare
                             count). "counted" says which.

A line that is not a JSON object of a known shape is reported on stderr
with its line number and skipped; the exit status is then 1.

Examples:
  echo '{"text":"Hello world"}' | measure
  echo '{"messages":[{"role":"user","content":"Hi"}]}' | measure --apply-chat-template --rendered
  measure --tokenizer meta-llama/Llama-3.1-8B-Instruct --ids prompts.jsonl
  probe --apply-chat-template | compose --isl 1000 --conversations 100 --model m \
    | send --dry-run | measure --apply-chat-template --summary > measured.jsonl
  measure --apply-chat-template --summary --plot isl.html profile_export_raw.jsonl
`

type flags struct {
	Tokenizer         string   `help:"Model: a tokenizer.json file, a model folder, or ORG/NAME from the local HuggingFace cache (never downloaded). Default: the embedded Qwen3 tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	ChatTemplate      string   `help:"Jinja chat template file that replaces the model's own." placeholder:"FILE" type:"existingfile"`
	ApplyChatTemplate bool     `help:"Count message records through the chat template, as the server does."`
	Now               string   `help:"Pin strftime_now for templates that print the date (e.g. 2025-07-10T12:00:00); default: $ISLKIT_NOW, else the clock. Without it such templates change the count from one day to the next." placeholder:"TIME"`
	IDs               bool     `name:"ids" help:"Add the token ids to text records."`
	Rendered          bool     `help:"Add the rendered template text to message records."`
	Bare              bool     `help:"Also give AIPerf's bare count for requests counted through the template (costs a second encode)."`
	NoTools           bool     `help:"Do not pass a request's tools to the template; count their texts bare on top, as AIPerf does."`
	Summary           bool     `help:"Print a summary table on stderr at the end: exact-hit rate and errors vs target and vs server, by turn and by cause."`
	SummaryJSON       string   `name:"summary-json" help:"Write the summary as JSON to FILE (schemas/summary.schema.json)." placeholder:"FILE"`
	Plot              string   `help:"Draw the error histograms per turn to FILE.svg or FILE.html." placeholder:"FILE"`
	MaxLineBytes      int      `help:"Longest input line accepted, in bytes; a longer one is reported and skipped." default:"268435456"`
	Workers           int      `help:"Records processed in parallel (output stays in input order)." default:"${cpus}"`
	Files             []string `arg:"" optional:"" help:"Input JSONL files; none or - reads stdin." type:"path"`
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f flags
	if _, code, done := cli.Parse("measure", args, stdout, stderr, &f,
		kong.Description(description), kong.Vars{"cpus": fmt.Sprint(runtime.NumCPU())}); done {
		return code
	}
	failed, err := f.run(stdin, stdout, stderr)
	if err != nil {
		return cli.Fail(stderr, "measure", err)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "measure: %d line(s) failed\n", failed)
		return cli.ExitFailed
	}
	return cli.ExitOK
}

// run measures the inputs and returns how many lines failed.
func (f *flags) run(stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if f.MaxLineBytes < 1 {
		return 0, cli.Usagef("--max-line-bytes must be positive")
	}
	if f.Workers < 1 {
		return 0, cli.Usagef("--workers must be at least 1")
	}
	plotFormat := ""
	if f.Plot != "" {
		switch strings.ToLower(filepath.Ext(f.Plot)) {
		case ".svg":
			plotFormat = "svg"
		case ".html", ".htm":
			plotFormat = "html"
		default:
			return 0, cli.Usagef("--plot %s: the file must end in .svg or .html", f.Plot)
		}
	}
	// The template is loaded even without --apply-chat-template: counts
	// stay bare then, but a gap to the server's count is explained with it.
	mdl, err := model.Load(model.Options{Tokenizer: f.Tokenizer, ChatTemplate: f.ChatTemplate, Now: f.Now})
	if err != nil {
		return 0, cli.ModelError(err)
	}
	if mdl.TemplateErr != nil && f.ApplyChatTemplate {
		return 0, mdl.TemplateErr
	}
	m := measure.New(measure.Options{
		Tokenizer:         mdl.Tokenizer,
		Template:          mdl.Template,
		ApplyChatTemplate: f.ApplyChatTemplate,
		IDs:               f.IDs,
		Rendered:          f.Rendered,
		Now:               mdl.Now,
		NoTools:           f.NoTools,
		Bare:              f.Bare,
	})
	summary := report.NewSummary()
	ctx, stop := cli.Signals()
	defer stop()
	w := jsonl.NewWriter(stdout)
	failed := 0
	err = cli.Inputs(stdin, f.Files, measure.ReadInput, func(r *jsonl.Reader) error {
		r.SetMaxLineSize(f.MaxLineBytes)
		r.SetSkipLongLines(true)
		st, err := pipeline.Map(ctx, r, w, f.Workers, func(line jsonl.Line) (pipeline.Output, error) {
			res, err := m.Line(line)
			return pipeline.Output{Lines: res.Lines, Value: res.ISLs}, err
		}, func(err error, _ pipeline.Output) {
			fmt.Fprintf(stderr, "measure: %v\n", err)
			summary.AddFailure(measure.FailureKind(err))
		}, func(v any) {
			for _, isl := range v.([]records.ISL) {
				summary.Add(isl)
			}
		})
		failed += st.Failed
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err = cli.Cause(ctx, err); err != nil {
		return failed, err
	}
	return failed, writeReports(f, stderr, summary, plotFormat)
}

func writeReports(f *flags, stderr io.Writer, summary *report.Summary, plotFormat string) error {
	if f.Summary {
		if err := summary.WriteText(stderr); err != nil {
			return err
		}
	}
	if f.SummaryJSON != "" {
		data, err := json.MarshalIndent(summary, "", "  ")
		if err != nil {
			return err
		}
		if err := cli.WriteFile(f.SummaryJSON, append(data, '\n')); err != nil {
			return err
		}
	}
	if f.Plot != "" {
		var buf bytes.Buffer
		if err := summary.WritePlot(&buf, plotFormat); err != nil {
			return err
		}
		if err := cli.WriteFile(f.Plot, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
