// Command measure counts the tokens of JSONL records: the last filter of
// probe | compose | send | measure.
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/pipeline"
)

const description = `Count tokens exactly as the model server does.

Reads JSONL records (files, or stdin) and writes each one back with its
token count added, in input order:

  {"text": "..."}         -> "tokens" (and "ids" with --ids): the text
                             encoded without special tokens
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
`

type flags struct {
	Tokenizer         string   `help:"Model: a tokenizer.json file, a model folder, or ORG/NAME from the local HuggingFace cache (never downloaded). Default: the embedded Qwen3 tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	ChatTemplate      string   `help:"Jinja chat template file that replaces the model's own." placeholder:"FILE" type:"existingfile"`
	ApplyChatTemplate bool     `help:"Count message records through the chat template, as the server does."`
	Now               string   `help:"Pin strftime_now for templates that print the date (e.g. 2025-07-10T12:00:00); default: $ISLKIT_NOW, else the clock. Without it such templates change the count from one day to the next." placeholder:"TIME"`
	IDs               bool     `name:"ids" help:"Add the token ids to text records."`
	Rendered          bool     `help:"Add the rendered template text to message records."`
	Workers           int      `help:"Records processed in parallel (output stays in input order)." default:"${cpus}"`
	Files             []string `arg:"" optional:"" help:"Input JSONL files; none or - reads stdin." type:"path"`
}

func main() {
	var f flags
	kong.Parse(&f, kong.Name("measure"), kong.Description(description),
		kong.Vars{"cpus": fmt.Sprint(runtime.NumCPU())}, kong.UsageOnError())
	os.Exit(run(&f))
}

func run(f *flags) int {
	if f.Workers < 1 {
		fmt.Fprintln(os.Stderr, "measure: --workers must be at least 1")
		return cli.ExitUsage
	}
	model, err := cli.LoadModel(f.Tokenizer, f.ChatTemplate, f.Now, f.ApplyChatTemplate)
	if err != nil {
		return cli.Fail("measure", err)
	}
	tok, _ := model.Source.Tokenizer()
	m := measure.New(measure.Options{
		Tokenizer:         tok,
		Template:          model.Template,
		ApplyChatTemplate: f.ApplyChatTemplate,
		IDs:               f.IDs,
		Rendered:          f.Rendered,
		Now:               model.Now,
	})
	ctx, stop := cli.Signals()
	defer stop()
	w := jsonl.NewWriter(os.Stdout)
	failed := 0
	err = cli.Inputs(f.Files, func(r *jsonl.Reader) error {
		st, err := pipeline.Map(ctx, r, w, f.Workers, func(line jsonl.Line) ([][]byte, error) {
			return m.Record(line.Data)
		}, func(err error) { fmt.Fprintf(os.Stderr, "measure: %v\n", err) })
		failed += st.Failed
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err = cli.Cause(ctx, err); err != nil {
		return cli.Fail("measure", err)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "measure: %d line(s) failed\n", failed)
		return cli.ExitFailed
	}
	return cli.ExitOK
}
