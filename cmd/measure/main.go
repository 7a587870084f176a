// Command measure counts the tokens of JSONL records: the last filter of
// probe | compose | send | measure.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/export"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/outfile"
	"github.com/islkit/islkit/internal/pipeline"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/vision/imagehdr"
)

const description = `Count tokens exactly as the model server does.

Reads JSONL records (files, or stdin) and writes each one back with its
token count added, in input order:

  {"text": "..."}         -> "tokens" (and "ids" with --ids): the text
                             encoded without special tokens
  requests                -> "isl": send records, OpenAI bodies of chat
                             ("model" + "messages"), completions ("model" +
                             "prompt": a string, strings, token ids or
                             token-id lists) and the Responses API ("model"
                             + "input", "instructions"), AIPerf
                             profile_export_raw.jsonl records ("payload")
                             and AIPerf inputs.json ({"data": [...]}, one
                             output record per payload). "isl" holds the
                             bare count (AIPerf's default), the templated
                             count (--apply-chat-template: the server's
                             view; for completions the prompts encoded as
                             the server encodes them, no template), the
                             server's usage.prompt_tokens (input_tokens for
                             Responses; "server_field" says which), compose's
                             target, and the gaps between them split by
                             cause.
  {"messages": [...]}     -> "tokens": with --apply-chat-template, the
                             messages rendered through the model's chat
                             template (add_generation_prompt defaults to
                             true; "tools" and "chat_template_kwargs" are
                             passed to the template), then encoded; without
                             it, or for a model without a template, the
                             text parts joined by one space (AIPerf's bare
                             count). "counted" says which.

A request record that cannot be counted (a field measure cannot read, a
request the server would refuse) is written in its place with "isl":
{"error": ...}, and one whose usage is unreadable keeps its counts with
the error; the line is reported on stderr and the exit status is 1. send
--no-payload records get their performance figures and "isl.error" (not
a failure). A line that is not a JSON object of a known shape is
reported on stderr with its line number and skipped; the exit status is
then 1. An input without records is an error unless --allow-empty.

Examples:
  echo '{"text":"Hello world"}' | measure
  echo '{"messages":[{"role":"user","content":"Hi"}]}' | measure --apply-chat-template --rendered
  measure --tokenizer meta-llama/Llama-3.1-8B-Instruct --ids prompts.jsonl
  probe --apply-chat-template | compose --isl 1000 --conversations 100 --model m \
    | send --dry-run | measure --apply-chat-template --summary > measured.jsonl
  measure --apply-chat-template --summary --plot isl.html profile_export_raw.jsonl
  send --url http://localhost:8000 < convs.jsonl | measure --summary \
    --slo ttft=200ms,tpot=50ms --summary-json run.json --report run.html
  measure --summary-json run.json --export run.parquet live.jsonl > /dev/null
  measure --compare before.json after.json

` + report.Definitions + `
`

type flags struct {
	Tokenizer         string        `help:"Model: a tokenizer.json file, a model folder, or ORG/NAME from the Hugging Face Hub (downloaded into the shared HF cache; HF_TOKEN, HF_HUB_OFFLINE apply). Default: the embedded Qwen3 tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	Revision          string        `help:"Hub revision of --tokenizer ORG/NAME: branch, tag or commit (a cached commit needs no network)." default:"main" placeholder:"REV"`
	ChatTemplate      string        `help:"Jinja chat template file that replaces the model's own." placeholder:"FILE" type:"existingfile"`
	ApplyChatTemplate bool          `help:"Count message records through the chat template, as the server does."`
	Now               string        `help:"Pin strftime_now for templates that print the date (e.g. 2025-07-10T12:00:00); default: $ISLKIT_NOW, else the clock. Without it such templates change the count from one day to the next." placeholder:"TIME"`
	Renderer          string        `help:"What renders a chat request: jinja (the chat template), harmony (openai_harmony, as vLLM renders gpt-oss) or deepseek_v32 (DeepSeek-V3.2's encoder, as the --server runs it: vLLM's or SGLang's variant). Default: the server's choice by the model's config.json model_type (under vllm: gpt_oss → harmony, deepseek_v32 → deepseek_v32; under sglang: deepseek_v32 → deepseek_v32). mistral (mistral-common's encoding, a Mistral-format folder's default under vllm and a Tekken folder's under sglang, each server's message handling). With --apply-chat-template." placeholder:"NAME"`
	TokenizerMode     string        `help:"vLLM's --tokenizer-mode: mistral reads the model's tekken.json (even beside a tokenizer.json; a Hub model's is downloaded) and renders with mistral-common's encoding (--renderer mistral); hf needs a tokenizer.json; auto (default): the folder's tokenizer.json, else its tekken or tiktoken file." placeholder:"MODE"`
	IDs               bool          `name:"ids" help:"Add the token ids to text records."`
	Rendered          bool          `help:"Add the rendered template text to message records (with --apply-chat-template)."`
	Bare              bool          `help:"Also give AIPerf's bare count for requests counted through the template (with --apply-chat-template; costs a second encode)."`
	NoTools           bool          `help:"Do not pass a request's tools to the template; count their texts bare on top, as AIPerf does (with --apply-chat-template)."`
	Server            string        `help:"Count requests as this server preprocesses them: vllm, sglang, transformers (apply_chat_template on the messages as given) or aiperf (AIPerf's own count). A request that server would refuse fails its line." default:"vllm" enum:"vllm,sglang,transformers,aiperf"`
	CompareServer     string        `name:"compare-server" help:"Also count each templated request as this server would and split the difference by cause (isl.vs_profile): part join, tool-call arguments, reasoning, null content, generation prompt, ..." enum:",vllm,sglang,transformers,aiperf" default:""`
	Processor         string        `help:"Folder of the model's image processing (config.json with preprocessor_config.json / processor_config.json, or tekken.json) for counting images in requests; default: the --tokenizer folder. Without one, a request with an image fails its line as a text-only model's server refuses it." placeholder:"DIR" type:"existingdir"`
	LimitMMPerPrompt  string        `name:"limit-mm-per-prompt" help:"The server's --limit-mm-per-prompt ({\"image\":4} or image=4): a request with more images fails its line, as the server refuses it. Default: no limit." placeholder:"LIMITS"`
	FetchImages       bool          `name:"fetch-images" help:"Read the first bytes of remote image URLs (http, https) for their size, once per URL; without it only data URLs are counted and a remote one fails its line."`
	Summary           bool          `help:"Print a summary table on stderr at the end: exact-hit rate and errors vs target and vs server, by turn and by cause; for live records also latency, throughput, goodput and failures by kind (definitions below)."`
	SummaryJSON       string        `name:"summary-json" help:"Write the summary as JSON to FILE (schemas/summary.schema.json). A regular file is replaced atomically; a device, FIFO or /dev/stdout is written through." placeholder:"FILE"`
	Plot              string        `help:"Draw the error histograms per turn to FILE.svg or FILE.html." placeholder:"FILE"`
	Export            string        `help:"Write what was measured as tables for notebooks: one row per request to FILE.csv or FILE.parquet (the format by the extension), and beside it FILE.itl.*, FILE.stages.* and FILE.metrics.* (the gaps between output chunks, the per-stage performance, the server's metric samples); columns in schemas/export.md." placeholder:"FILE.csv|FILE.parquet"`
	Report            string        `help:"Write the whole summary as one self-contained HTML page to FILE.html: ISL error histograms, latency CDFs, TTFT against ISL, throughput and concurrency over time, and the tables (no JavaScript, no network)." placeholder:"FILE.html"`
	OSLTolerance      string        `name:"osl-tolerance" default:"5%,50" placeholder:"PCT%,TOKENS" help:"Warn in the summary's output-length section when a request's output misses its max_tokens by more than this: min(PCT % of max_tokens, TOKENS); one of the two alone is that one. Default: AIPerf's OSL mismatch threshold."`
	Percentiles       string        `help:"Percentiles to report on top of p50, p90, p95, p99, e.g. 25,75,99.9." placeholder:"P,..."`
	SLO               string        `name:"slo" help:"Goodput objectives, any subset: ttft=200ms,tpot=50ms,e2e=10s (a bare number is ms)." placeholder:"NAME=DUR,..."`
	MinGoodput        float64       `name:"min-goodput" default:"0.9" placeholder:"F" help:"With --slo and a staged run (send --stages): a stage meets the SLO when at least this fraction of its requests meet it (the summary names the highest such stage)."`
	LagLimit          time.Duration `name:"client-lag-limit" default:"5ms" help:"Say the client was saturated (the latencies include client time) when the p99 of the records' schedule lag (result.schedule_lag_ns) is above this."`
	CPULimit          float64       `name:"client-cpu-limit" default:"0.9" help:"Say the client was saturated when the p99 of the records' client CPU use (result.client_cpu, a fraction of send's cores) is at or above this."`
	MaxStartSkew      time.Duration `name:"max-start-skew" default:"1s" placeholder:"D" help:"Merged shards (send --shard, each output whole, its run record first): say they did not start together when their first requests span more than D."`
	Compare           bool          `help:"Read two --summary-json files (the arguments: A.json B.json) instead of records, and print them side by side with the ratio B/A of each figure; with --report FILE.html also a page with both staged runs' curves (send --stages) on one Pareto plot."`
	MaxLineBytes      int           `help:"Longest input line accepted, in bytes (64 MiB); a longer one is reported and skipped. Each worker needs about 8 times the longest line in memory." default:"67108864"`
	Workers           int           `help:"Records processed in parallel (output stays in input order)." default:"${cpus}"`
	AllowEmpty        bool          `name:"allow-empty" help:"Accept an input without records (by default an error: the stage before most likely failed)."`
	Files             []string      `arg:"" optional:"" help:"Input JSONL files; none or - reads stdin." type:"path"`
}

// signals gives the contexts signals cancel (tests deliver them).
var signals = cli.StopSignals

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f flags
	if _, code, done := cli.Parse("measure", args, stdout, stderr, &f,
		cli.Description(description), kong.Vars{"cpus": fmt.Sprint(runtime.NumCPU())}); done {
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
	if f.Compare {
		return 0, compare(f, stdout)
	}
	if f.MaxLineBytes < 1 {
		return 0, cli.Usagef("--max-line-bytes must be positive")
	}
	if f.Workers < 1 {
		return 0, cli.Usagef("--workers must be at least 1")
	}
	if err := cli.OnlyWith(map[string]bool{"bare": f.Bare, "rendered": f.Rendered, "no-tools": f.NoTools, "renderer": f.Renderer != ""}, f.ApplyChatTemplate,
		"with --apply-chat-template", "it acts on counts through the chat template; give --apply-chat-template too", "bare", "rendered", "no-tools", "renderer"); err != nil {
		return 0, err
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
	if f.Report != "" {
		if ext := strings.ToLower(filepath.Ext(f.Report)); ext != ".html" && ext != ".htm" {
			return 0, cli.Usagef("--report %s: the file must end in .html", f.Report)
		}
	}
	var opts report.Options
	var err error
	// Report paths are checked before any work: an unwritable folder
	// fails now, not after the whole input.
	var outs outfile.Set
	summaryOut, err := outs.Add("--summary-json", f.SummaryJSON)
	if err != nil {
		return 0, cli.Usagef("%v", err)
	}
	plotOut, err := outs.Add("--plot", f.Plot)
	if err != nil {
		return 0, cli.Usagef("%v", err)
	}
	reportOut, err := outs.Add("--report", f.Report)
	if err != nil {
		return 0, cli.Usagef("%v", err)
	}
	// The per-stage table follows the summary's options, read when the
	// tables are written.
	exp, err := export.New("--export", f.Export, &outs, &opts)
	if err != nil {
		return 0, cli.Usagef("%v", err)
	}
	if opts.Percentiles, err = report.ParsePercentiles(f.Percentiles); err != nil {
		return 0, cli.Usagef("%v", err)
	}
	tol, err := report.ParseOSLTolerance(f.OSLTolerance)
	if err != nil {
		return 0, cli.Usagef("%v", err)
	}
	opts.OSLTolerance = &tol
	if opts.SLO, err = report.ParseSLO(f.SLO); err != nil {
		return 0, cli.Usagef("%v", err)
	}
	if err := report.CheckMinGoodput(f.MinGoodput); err != nil {
		return 0, cli.Usagef("%v", err)
	}
	opts.MinGoodput = f.MinGoodput
	opts.Client = report.ClientLimits{LagLimit: f.LagLimit, CPULimit: f.CPULimit}
	if err := opts.Client.Validate(); err != nil {
		return 0, cli.Usagef("%v", err)
	}
	if f.MaxStartSkew <= 0 {
		return 0, cli.Usagef("--max-start-skew %v: want > 0", f.MaxStartSkew)
	}
	opts.StartSkewLimit = f.MaxStartSkew
	// The template is loaded even without --apply-chat-template: counts
	// stay bare then, but a gap to the server's count is explained with it.
	mdl, err := model.Load(model.Options{Tokenizer: modelsrc.Spec(f.Tokenizer, f.Revision), ChatTemplate: f.ChatTemplate, Now: f.Now, Renderer: f.Renderer, TokenizerMode: f.TokenizerMode, Server: f.Server})
	if err != nil {
		return 0, err
	}
	if mdl.TemplateErr != nil && f.ApplyChatTemplate {
		return 0, mdl.TemplateErr
	}
	vis, err := loadVision(f, mdl)
	if err != nil {
		return 0, err
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
		Server:            serverprofile.Profile(f.Server),
		CompareServer:     serverprofile.Profile(f.CompareServer),
		Model:             mdl,
		Vision:            vis,
	})
	summary := report.NewAccumulatorWith(opts)
	sig, stop := signals()
	defer stop()
	ctx := sig.Signalled
	// The stop notice is written from a goroutine of its own.
	stderr = cli.NewOutput(stderr)
	reading, fromFile := cli.StopReading(sig, stderr, "measure")
	// A reader gone away (`| head`) does not end the run: the summaries
	// are still written.
	out := cli.NewOutput(cli.NewReaderGone(stdout))
	w := jsonl.NewWriter(out)
	errLog := pipeline.NewErrorLog(stderr, "measure")
	failed, lines, conflicts := 0, 0, 0
	var dedup measure.Dedup
	// mu guards what the work adds to (the summary, the error log, the
	// counts): work given up on after a signal must not touch them while
	// the summaries are written (closed).
	var mu sync.Mutex
	closed := false
	// A signal ends the run within cli.StopGrace of the stop even while a
	// worker is busy on one huge line or the input is a FIFO that never
	// goes on.
	abandoned, err := cli.Interruptible(reading, func() error {
		return cli.Inputs(stdin, f.Files, func(r io.Reader) (io.Reader, error) {
			fromFile.Store(cli.IsRegularFile(r))
			return measure.ReadInput(r)
		}, func(r *jsonl.Reader) error {
			r.SetMaxLineSize(f.MaxLineBytes)
			r.SetSkipLongLines(true)
			st, err := pipeline.Map(reading, r, w, f.Workers, func(line jsonl.Line) (pipeline.Output[lineResult], error) {
				res, err := m.Line(line)
				return pipeline.Output[lineResult]{Lines: res.Lines, Value: lineResult{res, exp.Prepare(res.Lines, res.Requests)}}, err
			}, func(err error, _ pipeline.Output[lineResult]) {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					return
				}
				errLog.Report(err)
				summary.AddUnreadable(measure.FailureKind(err))
			}, func(res lineResult) bool {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					return false
				}
				keep, err := dedup.Check(res.Result)
				if err != nil {
					// Written, as every record read, but not counted.
					errLog.Report(err)
					conflicts++
					return true
				}
				if !keep {
					summary.AddDuplicate()
					return false
				}
				for _, req := range res.Requests {
					summary.AddRequest(req)
				}
				exp.Add(res.export, res.Requests)
				if res.Run != nil {
					summary.AddRun(*res.Run)
				}
				if res.Metrics != nil {
					summary.AddMetrics(*res.Metrics)
				}
				return true
			})
			mu.Lock()
			failed += st.Failed
			lines += st.Lines
			mu.Unlock()
			if err == nil && ctx.Err() != nil {
				err = context.Cause(ctx) // the input ended after a signal
			}
			return err
		})
	})
	if abandoned {
		// Given up on: flush the whole lines done, take no more, and write
		// the summaries of what was measured.
		cli.StopOutput(w, out)
		mu.Lock()
		closed = true
		mu.Unlock()
		if rerr := writeReports(f, stderr, summary, summaryOut, plotOut, reportOut, plotFormat, exp); rerr != nil {
			return 0, rerr
		}
		return 0, cli.Cause(ctx, err)
	}
	errLog.Close()
	for _, warning := range m.Warnings() {
		fmt.Fprintf(stderr, "measure: %s\n", warning)
	}
	if n := summary.Duplicates(); n > 0 {
		fmt.Fprintf(stderr, "measure: dropped %d duplicate record(s): the same request with the same content as an earlier line (counted once)\n", n)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	// Interrupted, the records read are written and so are the summaries,
	// then the signal's exit code.
	err = cli.Cause(ctx, err)
	var intr *cli.Interrupted
	if err != nil && !errors.As(err, &intr) {
		return failed, err
	}
	if lines == 0 && intr == nil && !f.AllowEmpty {
		return failed, fmt.Errorf("%s: no records: nothing to measure (did the stage before fail?); give --allow-empty to accept an empty input", inputNames(f.Files))
	}
	failed += conflicts
	if rerr := writeReports(f, stderr, summary, summaryOut, plotOut, reportOut, plotFormat, exp); rerr != nil {
		return failed, rerr
	}
	return failed, err
}

// lineResult is what the workers make of one input line: measure's result
// and, with --export, what its table rows take from its lines.
type lineResult struct {
	measure.Result
	export *export.Pending
}

// inputNames names the inputs for a message.
func inputNames(files []string) string {
	if len(files) == 0 || len(files) == 1 && files[0] == "-" {
		return "<stdin>"
	}
	return strings.Join(files, ", ")
}

func writeReports(f *flags, stderr io.Writer, summary *report.Accumulator, summaryOut, plotOut, reportOut *outfile.File, plotFormat string, exp *export.Exporter) error {
	if f.Summary {
		if err := summary.WriteText(stderr); err != nil {
			return err
		}
	}
	if summaryOut != nil {
		data, err := json.MarshalIndent(summary, "", "  ")
		if err != nil {
			return err
		}
		if err := summaryOut.Write(append(data, '\n')); err != nil {
			return err
		}
	}
	if plotOut != nil {
		if err := plotOut.WriteWith(func(w io.Writer) error { return summary.WritePlot(w, plotFormat) }); err != nil {
			return err
		}
	}
	if reportOut != nil {
		if err := reportOut.WriteWith(summary.WriteReport); err != nil {
			return err
		}
	}
	return exp.Write()
}

// compare prints two summary files side by side (measure --compare).
func compare(f *flags, stdout io.Writer) error {
	if len(f.Files) != 2 {
		return cli.Usagef("--compare takes two summary files: measure --compare A.json B.json")
	}
	if f.Report != "" {
		// Two sweeps' curves on one plot, with the figures side by side.
		if ext := strings.ToLower(filepath.Ext(f.Report)); ext != ".html" && ext != ".htm" {
			return cli.Usagef("--report %s: the file must end in .html", f.Report)
		}
		var outs outfile.Set
		out, err := outs.Add("--report", f.Report)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		if err := out.WriteWith(func(w io.Writer) error { return report.ComparePage(w, f.Files[0], f.Files[1]) }); err != nil {
			return err
		}
	}
	return report.CompareFiles(stdout, f.Files[0], f.Files[1])
}

// loadVision reads the model's image processing (--processor, else the
// model folder) with the server's image limit; nil for a text-only model.
func loadVision(f *flags, mdl *model.Model) (*serverprofile.Vision, error) {
	vis, err := serverprofile.VisionFlags(f.Processor, mdl.Source.Dir, f.LimitMMPerPrompt)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if vis != nil && f.FetchImages {
		vis.Fetch = imagehdr.NewFetcher(nil, 30*time.Second).Header
	}
	return vis, nil
}
