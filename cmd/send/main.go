// Command send turns compose's conversations into requests to the
// endpoint each was composed for (chat completions, completions or
// responses): --dry-run writes the exact payloads, otherwise it sends them to
// --url and writes one islkit.request record per request.
//
// Exit status: 0 all requests succeeded, 1 a request or the run failed,
// 2 usage error, 130/143 stopped by a signal.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/metrics/scrape"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/send/pace"
)

const description = `Send compose's conversations as requests to their endpoint (or write them with --dry-run).

The endpoint is the one compose sized the conversations for (--endpoint):
  chat         POST /v1/chat/completions: messages, max_tokens (or
               max_completion_tokens), stream, stream_options.
  completions  POST /v1/completions: prompt (the turn's text, marker
               included, as a string), max_tokens, stream, stream_options.
  responses    POST /v1/responses: instructions (the system prompt, when
               there is one), input (the conversation as message items:
               compose's replies as history in a dry run, the server's
               real replies live), max_output_tokens, stream; streamed
               answers are read as Responses events
               (response.output_text.delta for timings, response.completed
               for usage: input_tokens, output_tokens, cached_tokens).
A bare --url gets the endpoint's path.

A live run writes one islkit.request record per request, in completion
order. Requests cut off at a stop (Ctrl-C, the end of --duration plus
--grace) are recorded with error kind "cancelled" and are not failures.`

type flags struct {
	Input string `arg:"" optional:"" default:"-" help:"Conversations JSONL (compose's output); - for stdin."`

	DryRun bool   `help:"Write the request payloads instead of sending them."`
	Format string `default:"jsonl" enum:"jsonl,aiperf-inputs" help:"Dry-run output: jsonl records or AIPerf's inputs.json (${enum})."`

	Endpoint       string `help:"Endpoint to send to: chat, completions or responses; must be the conversations' (which is the default)." placeholder:"ENDPOINT"`
	Model          string `help:"Model name for the payload (default: the conversation's)."`
	MaxTokensField string `default:"max_tokens" enum:"max_tokens,max_completion_tokens" help:"Body field carrying each turn's output length (${enum})."`
	Stream         bool   `default:"true" negatable:"" help:"Ask for a streamed (SSE) response with usage."`
	ExactOSL       bool   `name:"exact-osl" default:"true" negatable:"" help:"Ask the server for exactly each turn's max_tokens output tokens, in its parameters (--server): vllm, sglang, trtllm, dynamo: ignore_eos and min_tokens; llamacpp: n_predict and ignore_eos. Written into the body (the dry run shows them); members --extra-body sets are kept as given and reported. openai (a hosted API), transformers and aiperf cannot be told: their requests are recorded best effort (output_length.mode). --exact-osl=false: the model stops when it likes."`
	ResponsesChain bool   `name:"responses-chain" help:"Chain each conversation's Responses turns as a stateful client does: every request \"store\": true, each later turn only its new input with the previous answer's id (previous_response_id; a dry run names it dry-run:CONV:TURN). The server prefills the conversation it reconstructs, which the record keeps (chained.reconstructed) and measure counts; --exact sizes it. Needs --endpoint responses."`
	Server         string `help:"The server the requests go to: its output-length parameters (--exact-osl) and, with --exact, its preprocessing, which the count follows (as measure --server; only vllm, sglang, transformers, aiperf, and the conversations' own: another is refused). Default: the one the conversations were composed for (compose --server)." default:"" enum:",vllm,sglang,transformers,aiperf,llamacpp,trtllm,dynamo,openai"`
	ExtraBody      string `placeholder:"JSON" help:"JSON object merged into every body, e.g. '{\"ignore_eos\":true,\"min_tokens\":100}'; the fields send sets (model, messages, max_tokens, stream, ...) are refused."`

	URL            string            `help:"Server base URL, e.g. http://127.0.0.1:8000 (POST to the endpoint's path, /v1/chat/completions for chat), or the full endpoint URL."`
	APIKey         string            `env:"OPENAI_API_KEY" help:"Bearer token."`
	Header         map[string]string `short:"H" placeholder:"NAME=VALUE" help:"Extra request header (repeatable)."`
	MaxErrors      int               `name:"max-consecutive-errors" placeholder:"N" help:"Stop issuing after N failed requests in a row (the server is down); the requests sent are all recorded. 0: never stop."`
	Insecure       bool              `help:"Do not check the server's TLS certificate (https with a self-signed certificate)."`
	CACert         string            `name:"ca-cert" placeholder:"FILE" help:"PEM certificate(s) to trust for an https --url, besides the system's."`
	Concurrency    int               `help:"Sessions in flight (default 1 when --rate is unset)."`
	Rate           float64           `help:"Requests per second (0: as fast as --concurrency allows)."`
	RateDist       string            `name:"rate-distribution" default:"constant" enum:"constant,poisson,gamma" help:"Arrival process for --rate (${enum}): even gaps of 1/rate; exponential gaps (Poisson); gamma gaps of shape --burstiness and mean 1/rate (vLLM's)."`
	Burstiness     float64           `placeholder:"B" help:"Gamma shape of --rate-distribution gamma (vLLM's --burstiness): 1 is Poisson, below 1 burstier, above 1 more even (default 1)."`
	Seed           uint64            `default:"1" help:"Seed of the Poisson and gamma arrivals."`
	RampUp         time.Duration     `name:"ramp-up" placeholder:"D" help:"Raise the load linearly over D: with --rate, the rate from 0 to --rate (the requests by time t are rate*t^2/(2D)); otherwise the sessions in flight, one more at even steps from 1 to --concurrency at D."`
	Warmup         int               `placeholder:"N" help:"Send N warmup requests first (at --rate, no ramp-up), marked warmup in their records and left out of measure's summary; the measured requests (--requests of them) start their schedule (and --duration its clock) once every warmup request has ended."`
	Requests       int               `help:"Stop after this many requests (0: one pass over the dataset)."`
	Duration       time.Duration     `help:"Stop issuing after this long."`
	Recycle        bool              `help:"Start the dataset over (with new markers) until --requests or --duration."`
	Schedule       string            `default:"none" enum:"none,timestamps" help:"timestamps: issue each request at its trace row's time (compose --trace), relative to the first row, recording how late it went out (result.schedule_lag_ns); without --concurrency as many run at once as the trace asks (${enum})."`
	Speedup        float64           `default:"1" help:"With --schedule timestamps, replay this many times faster (2: half the gaps)."`
	Timeout        time.Duration     `default:"10m" help:"Per-request timeout."`
	Grace          time.Duration     `default:"30s" help:"On stop (Ctrl-C, --duration), how long in-flight requests may finish."`
	Shard          string            `placeholder:"I/N" help:"Send only conversations with index mod N == I (run N senders, cat the records). env/N: I is $JOB_COMPLETION_INDEX, the pod's index in a Kubernetes Indexed Job (deploy/kubernetes)."`
	StartAt        string            `name:"start-at" placeholder:"TIME" help:"Wait until TIME (RFC 3339, e.g. 2026-01-02T15:04:05Z) before the first request, so the shards of a run across machines start together; past by at most 1m (then it starts at once), at most 24h ahead. In the run record (start_at)."`
	NoPayload      bool              `help:"Leave the payload out of live records (smaller output)."`
	LagLimit       time.Duration     `name:"client-lag-limit" default:"5ms" help:"Say the client was saturated (on stderr; measure says it in its summary) when the p99 schedule lag (result.schedule_lag_ns: actual - intended start) is above this."`
	CPULimit       float64           `name:"client-cpu-limit" default:"0.9" help:"Say the client was saturated when the p99 of send's own CPU use (result.client_cpu, a fraction of the cores it may use) is at or above this."`
	Progress       string            `default:"auto" enum:"auto,always,never" help:"Progress line on stderr (${enum}: auto = when stderr is a terminal)."`
	ScrapeMetrics  string            `name:"scrape-metrics" default:"auto" placeholder:"auto|off|URL" help:"Sample the server's Prometheus metrics into the output, one islkit.metrics record per sample (one before the first request, one every --scrape-interval, one after the last), which measure checks its counts against: auto = the /metrics next to --url when it answers; off; or the metrics URL."`
	ScrapeInterval time.Duration     `name:"scrape-interval" default:"5s" placeholder:"D" help:"Time between metrics samples (at least 100ms)."`
	MetricsSeries  string            `name:"metrics-series" placeholder:"NAMES" help:"Series to keep from each scrape: comma-separated names (a counter's with or without _total) or prefixes ending in * (vllm:* keeps every vLLM series). Default: the running and waiting requests, KV-cache usage, prompt and generation token counters, prefix-cache queries and hits, request counters and TTFT/ITL/E2E histograms of --server (vllm:... or sglang:...; both when the server is another)."`
	AllowEmpty     bool              `help:"Accept an input with no conversations: say so and exit 0, sending nothing. Without it, empty input is an error (exit 1): the stage before send most likely failed."`

	// Staged runs (send --stages): one block, kept together.
	Stages        string        `placeholder:"KIND:LEVELS" help:"Run load levels one after another in one run: concurrency:1,2,4,8 or rate:5,10,20 (any --rate-distribution), or a sweep: concurrency:1..64*2 (geometric), rate:10..100+10 (linear). Each stage lasts --stage-duration or --stage-requests, starts with its own --warmup, goes on with the dataset where the one before stopped (pass after pass), and every record carries its stage; send prints each stage's figures and client verdict on stderr." group:"stages"`
	StageDuration time.Duration `name:"stage-duration" placeholder:"D" help:"With --stages: stop issuing in a stage after D (its requests in flight finish, within --grace)." group:"stages"`
	StageRequests int           `name:"stage-requests" placeholder:"N" help:"With --stages: N measured requests per stage (with --stage-duration too: whichever ends first)." group:"stages"`
	StageCooldown time.Duration `name:"stage-cooldown" placeholder:"D" help:"With --stages: wait D between two stages, nothing in flight, so one stage's queue does not spill into the next." group:"stages"`
	SLO           string        `name:"slo" placeholder:"NAME=DUR,..." help:"With --stages: the goodput objectives each stage is judged by, as measure --slo: ttft=200ms,tpot=50ms,e2e=10s." group:"stages"`
	UntilSLO      bool          `name:"until-slo" help:"With --stages and --slo: stop at the first stage whose goodput fraction is below --min-goodput, then bisect between the last level that met it and that one down to --slo-resolution; a stage missed while the client itself was saturated stops the search and is not taken for the server's limit." group:"stages"`
	MinGoodput    float64       `name:"min-goodput" default:"0.9" placeholder:"F" help:"With --until-slo: the fraction of a stage's requests that must meet the SLO." group:"stages"`
	SLOResolution float64       `name:"slo-resolution" placeholder:"R" help:"With --until-slo: bisect until the last level met and the first missed are at most R apart (sessions or requests/s; default 1)." group:"stages"`

	Exact         bool   `help:"Make every live request's ISL exactly its target_isl against the server's real replies: each request is rendered as --server renders it (chat and responses; a completions prompt is encoded with the special tokens the server adds) and its turn's text cut shorter or grown from the reserve compose --live wrote; a target the history alone exceeds is sent as small as possible and recorded unreachable. Needs conversations from compose --live." group:"exact"`
	Tokenizer     string `help:"With --exact: the model compose used (tokenizer.json, folder or ORG/NAME; its SHA-256 is checked against the records). Default: the records' composed_for." placeholder:"PATH|DIR|ORG/NAME" group:"exact"`
	Revision      string `help:"With --exact: Hub revision of --tokenizer ORG/NAME." default:"main" placeholder:"REV" group:"exact"`
	ChatTemplate  string `help:"With --exact: the chat template file compose used (SHA-256 checked). Default: the records'." placeholder:"FILE" type:"existingfile" group:"exact"`
	Renderer      string `help:"With --exact: what renders a request: jinja, harmony, mistral or deepseek_v32 (as measure --renderer). Default: the records' (compose's), else the server's choice by the model's config.json model_type." placeholder:"NAME" group:"exact"`
	TokenizerMode string `help:"With --exact: vLLM's --tokenizer-mode: mistral reads the model's tekken.json (even beside a tokenizer.json; a Hub model's is downloaded) and renders with mistral-common's encoding (--renderer mistral); hf needs a tokenizer.json; auto (default): the folder's tokenizer.json, else its tekken or tiktoken file. Default: the records'." placeholder:"MODE" group:"exact"`
	Now           string `help:"With --exact: pin strftime_now. Default: $ISLKIT_NOW, else the records' clock." placeholder:"TIME" group:"exact"`
	Processor     string `help:"With --exact: the folder of the model's image processing the conversations' images are counted with (config.json with preprocessor_config.json / processor_config.json). Default: the records' (compose --processor), else the --tokenizer folder." placeholder:"DIR" type:"existingdir" group:"exact"`

	args []string // the command line, for the run record
}

// signals gives the context a signal cancels (tests deliver one).
var signals = cli.Signals

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c flags
	kctx, code, done := cli.Parse("send", args, stdout, stderr, &c,
		cli.Description(description))
	if done {
		return code
	}
	ctx, stop := signals()
	defer stop()
	c.args = args
	code, err := c.run(ctx, cli.Given(kctx), stdin, stdout, stderr)
	if err != nil {
		// Fail decides: 2 for usage, 1 for a failed run, 0 for a closed
		// stdout (`send | head -1` is a normal way to stop).
		if code = cli.Fail(stderr, "send", err); code == cli.ExitOK {
			return code
		}
	}
	// The user stopped the run: that, not what was cut off, is its status.
	if in, ok := cli.InterruptedBy(ctx); ok && code != cli.ExitUsage {
		return in.ExitCode()
	}
	return code
}

// liveOnly are the flags a dry run has no use for.
var liveOnly = []string{"requests", "recycle", "duration", "rate", "rate-distribution", "burstiness", "ramp-up", "warmup", "seed", "concurrency",
	"timeout", "grace", "header", "api-key", "no-payload", "progress", "insecure", "ca-cert",
	"max-consecutive-errors", "schedule", "speedup", "exact", "client-lag-limit", "client-cpu-limit", "start-at",
	"scrape-metrics", "scrape-interval", "metrics-series",
	"stages", "stage-duration", "stage-requests", "stage-cooldown", "slo", "until-slo", "min-goodput", "slo-resolution"}

// stagesOnly and untilSLOOnly are the flags only --stages and --until-slo
// read.
var (
	stagesOnly   = []string{"stage-duration", "stage-requests", "stage-cooldown", "slo", "until-slo"}
	untilSLOOnly = []string{"min-goodput", "slo-resolution"}
)

// exactOnly are the flags only --exact reads.
var exactOnly = []string{"tokenizer", "revision", "chat-template", "now", "renderer", "tokenizer-mode", "processor"}

// run sends; given holds the flags spelled out on the command line.
func (c *flags) run(ctx context.Context, given map[string]bool, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	shard, err := send.ParseShardEnv(c.Shard, os.LookupEnv)
	if err != nil {
		return cli.ExitUsage, usage(err)
	}
	var startAt time.Time
	if c.StartAt != "" {
		if startAt, err = send.ParseStartAt(c.StartAt, time.Now()); err != nil {
			return cli.ExitUsage, usage(err)
		}
	}
	if !c.DryRun && c.URL == "" {
		return cli.ExitUsage, usage(errors.New("give --url to send, or --dry-run to write the payloads"))
	}
	if c.DryRun && c.URL != "" {
		return cli.ExitUsage, usage(errors.New("--dry-run sends nothing: drop --url"))
	}
	for _, err := range []error{
		cli.OnlyWith(given, !c.DryRun, "to a live run", "drop it or --dry-run", liveOnly...),
		cli.OnlyWith(given, c.Exact, "with --exact", "", exactOnly...),
		cli.OnlyWith(given, c.Stages != "", "with --stages", "", stagesOnly...),
		cli.OnlyWith(given, c.UntilSLO, "with --until-slo", "", untilSLOOnly...),
		cli.OnlyWith(map[string]bool{"format": c.Format != send.FormatJSONL}, c.DryRun, "with --dry-run", "", "format"),
	} {
		if err != nil {
			return cli.ExitUsage, err
		}
	}
	var once sync.Once
	warn := func(err error) {
		once.Do(func() { fmt.Fprintf(stderr, "send: warning: %v (further drops not reported)\n", err) })
	}
	b, err := send.NewBuilder(send.PayloadOptions{Model: c.Model, MaxTokensField: c.MaxTokensField,
		Stream: c.Stream, ExtraBody: c.ExtraBody, ExactOSL: c.ExactOSL, Server: c.Server, ResponsesChain: c.ResponsesChain}, warn)
	if err != nil {
		return cli.ExitUsage, usage(err)
	}
	opts := send.Config{URL: c.URL, APIKey: c.APIKey, Concurrency: c.Concurrency, Rate: c.Rate,
		RateDistribution: c.RateDist, Burstiness: c.Burstiness, RampUp: c.RampUp, Warmup: c.Warmup, Seed: c.Seed, Requests: c.Requests, Duration: c.Duration,
		Recycle: c.Recycle, Timeout: c.Timeout, Grace: c.Grace, Shard: shard, NoPayload: c.NoPayload,
		MaxConsecutiveErrors: c.MaxErrors, Speedup: c.Speedup,
		ClientLimits: report.ClientLimits{LagLimit: c.LagLimit, CPULimit: c.CPULimit}}
	if c.Schedule == send.ScheduleTimestamps {
		opts.Schedule = send.ScheduleTimestamps
	}
	if !c.DryRun {
		if opts.Scrape, err = c.scrape(given); err != nil {
			return cli.ExitUsage, err
		}
	}
	if opts.Stages, err = c.stagePlan(); err != nil {
		return cli.ExitUsage, usage(err)
	}
	if len(c.Header) > 0 {
		opts.Header = http.Header{}
		for k, v := range c.Header {
			opts.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	// 0 given is not the default left out: refused, as negatives are
	// (issue 27 item 18: it silently meant the default).
	switch {
	case given["concurrency"] && c.Concurrency == 0:
		return cli.ExitUsage, usage(errors.New("--concurrency 0: want 1 to 100000 sessions in flight (leave it out for 1, or for as many as --rate needs)"))
	case given["speedup"] && c.Speedup == 0:
		return cli.ExitUsage, usage(errors.New("--speedup 0: want a positive factor (2 replays twice as fast; leave it out for 1)"))
	}
	if !c.DryRun {
		if opts, err = opts.Validate(); err != nil {
			return cli.ExitUsage, usage(err)
		}
		if opts.TLS, err = send.TLSConfig(c.Insecure, c.CACert); err != nil {
			return cli.ExitUsage, usage(err)
		}
		if opts.TLS != nil && !strings.HasPrefix(c.URL, "https:") {
			flag := "--insecure"
			if c.CACert != "" {
				flag = "--ca-cert"
			}
			return cli.ExitUsage, usage(fmt.Errorf("%s applies to an https --url only", flag))
		}
	}
	in, name := stdin, "<stdin>"
	if c.Input != "-" {
		f, err := os.Open(c.Input)
		if err != nil {
			return cli.ExitFailed, err
		}
		defer f.Close()
		in, name = f, c.Input
	}
	// Read everything first: a bad line stops the run before any request.
	// A signal stops the read too, even one blocked on a FIFO.
	var convs []records.Conversation
	_, err = cli.Interruptible(ctx, func() error {
		var err error
		convs, err = send.ReadConversations(in, name)
		return err
	})
	if err = cli.Cause(ctx, err); err != nil {
		// A signal during the read, even one the read outlived, ends the
		// run here with the signal's code (not a "cannot reach" later).
		return cli.ExitFailed, err
	}
	if len(convs) == 0 {
		// Most often the stage before send failed (probe or compose
		// wrote nothing): a pipeline must not end in exit 0 then (issue
		// 27 item 10). --allow-empty makes it nothing to do (a dry run
		// still writes its empty document).
		if !c.AllowEmpty {
			return cli.ExitFailed, fmt.Errorf("no conversations in %s: nothing to send (did the command before send fail? --allow-empty accepts an empty input)", name)
		}
		fmt.Fprintf(stderr, "send: no conversations in %s: nothing to send\n", name)
		if !c.DryRun {
			return cli.ExitOK, nil
		}
	}
	var want endpoint.Kind
	if c.Endpoint != "" {
		if want, err = endpoint.Parse(c.Endpoint); err != nil {
			return cli.ExitUsage, usage(fmt.Errorf("--endpoint: %w", err))
		}
	}
	if opts.Endpoint, err = send.CheckEndpoint(convs, want); err != nil {
		return cli.ExitUsage, usage(fmt.Errorf("%s: %w", name, err))
	}
	if opts.Endpoint != endpoint.Chat && given["max-tokens-field"] {
		return cli.ExitUsage, usage(fmt.Errorf("--max-tokens-field is for chat requests; %s bodies carry %s", opts.Endpoint, map[endpoint.Kind]string{endpoint.Completions: "max_tokens", endpoint.Responses: "max_output_tokens"}[opts.Endpoint]))
	}
	if c.ResponsesChain && opts.Endpoint != endpoint.Responses {
		return cli.ExitUsage, usage(fmt.Errorf("--responses-chain chains Responses requests; %s is for --endpoint %s", name, opts.Endpoint))
	}
	if c.ResponsesChain && c.Format != send.FormatJSONL {
		return cli.ExitUsage, usage(errors.New("--responses-chain: AIPerf's inputs.json has no previous_response_id; write jsonl"))
	}
	if err := b.CheckModels(convs); err != nil {
		return cli.ExitUsage, usage(fmt.Errorf("%s: %w", name, err))
	}
	if !c.DryRun {
		if err := opts.CheckDataset(convs); err != nil {
			return cli.ExitUsage, usage(fmt.Errorf("%s: %w", name, err))
		}
	}
	for _, n := range b.OutputNotes(convs) {
		fmt.Fprintf(stderr, "send: note: %s\n", n)
	}
	var wiring send.Wiring
	if c.Exact {
		if wiring.Sizer, err = c.sizer(convs, name); err != nil {
			return cli.ExitUsage, err
		}
	}
	if c.DryRun {
		out := cli.NewOutput(stdout)
		_, err := cli.Interruptible(ctx, func() error {
			_, err := send.DryRun(out, convs, b, shard, c.Format)
			return err
		})
		out.Close() // whole lines only, if the signal did not wait for DryRun
		return cli.ExitOK, cli.Cause(ctx, err)
	}
	if c.Progress == "always" || (c.Progress == "auto" && isTerminal(stderr)) {
		wiring.Progress = stderr
	}
	if opts.Stages != nil {
		wiring.StageDone = func(s report.StageReport) { fmt.Fprintf(stderr, "\rsend: %s\n", stageLine(s)) }
	}
	// Everything is read and loaded: wait for the shards' common start.
	if !startAt.IsZero() {
		if late := time.Since(startAt); late > 0 {
			fmt.Fprintf(stderr, "send: warning: --start-at %s passed %s ago: starting now (measure states the shards' start skew)\n", c.StartAt, late.Round(time.Millisecond))
		}
		if err := cli.Cause(ctx, send.WaitUntil(ctx, startAt)); err != nil {
			return cli.ExitFailed, err
		}
	}
	// The run's configuration goes first, once: measure puts it in the
	// summary and the report, and --compare tells what differed.
	if err := writeRunRecord(stdout, c, opts, b, convs); err != nil {
		return cli.ExitFailed, err
	}
	sum, err := send.Run(ctx, stdout, convs, b, opts, wiring)
	if err != nil {
		return cli.ExitFailed, err
	}
	if sum.ScrapeOff != "" {
		fmt.Fprintf(stderr, "send: note: %s\n", sum.ScrapeOff)
	}
	if w := sum.Client.Warning(); w != "" {
		fmt.Fprintf(stderr, "send: warning: %s\n", w)
	}
	if sum.Search != nil {
		fmt.Fprintf(stderr, "send: --until-slo: %s\n", searchLine(*sum.Search, opts.Stages.Levels.Kind))
	}
	if n := sum.Client.Note(); n != "" {
		fmt.Fprintf(stderr, "send: note: %s\n", n)
	}
	if sum.Cancelled > 0 {
		why := "still running when the grace period (--grace " + c.Grace.String() + ") ended"
		fmt.Fprintf(stderr, "send: %s cancelled: %s\n", plural(sum.Cancelled, "request"), why)
	}
	if sum.GaveUp {
		fmt.Fprintf(stderr, "send: stopped issuing after %d consecutive errors (--max-consecutive-errors): the server looks down\n", c.MaxErrors)
	}
	if sum.Unreachable > 0 {
		fmt.Fprintf(stderr, "send: %d of %d requests could not be made exact (--exact): their records say unreachable and by how much (replies longer than budgeted: raise --isl or lower --osl in compose)\n", sum.Unreachable, sum.Requests)
	}
	if sum.Failed > 0 {
		fmt.Fprintf(stderr, "send: %d of %d requests failed: %s\n", sum.Failed, sum.Requests, sum.FailedKinds())
		return cli.ExitFailed, nil
	}
	return cli.ExitOK, nil
}

// sizer loads the model the conversations were composed for (or the one
// the flags name, which must be it) for --exact.
func (c *flags) sizer(convs []records.Conversation, name string) (*exact.Sizer, error) {
	f, err := exact.ComposedFor(convs)
	if err != nil {
		return nil, usage(fmt.Errorf("%s: %w", name, err))
	}
	profile, err := exact.ServerFor(convs, c.Server)
	if err != nil {
		return nil, usage(fmt.Errorf("%s: %w", name, err))
	}
	m, err := exact.LoadModel(*f, model.Options{Tokenizer: modelsrc.Spec(c.Tokenizer, c.Revision), ChatTemplate: c.ChatTemplate, Now: c.Now, Renderer: c.Renderer, TokenizerMode: c.TokenizerMode, Server: string(profile)}, c.Processor)
	if cli.IsUsage(err) {
		return nil, fmt.Errorf("%s: %w", name, err) // another model than the records' (exit 2 still)
	}
	if err != nil {
		return nil, err
	}
	return exact.NewSizer(m, profile), nil
}

// scrape is --scrape-metrics, --scrape-interval and --metrics-series.
func (c *flags) scrape(given map[string]bool) (send.ScrapeConfig, error) {
	var sc send.ScrapeConfig
	switch c.ScrapeMetrics {
	case "off":
		if err := cli.OnlyWith(given, false, "while scraping", "drop it, or scrape: --scrape-metrics auto or a URL", "scrape-interval", "metrics-series"); err != nil {
			return sc, err
		}
		return sc, nil
	case "auto":
		sc.URL, sc.Auto = scrape.URLNextTo(c.URL), true
	default:
		sc.URL = c.ScrapeMetrics
	}
	sc.Interval, sc.Settle = c.ScrapeInterval, send.DefaultScrapeSettle
	if given["metrics-series"] {
		sel, err := scrape.ParseSelection(c.MetricsSeries)
		if err != nil {
			return sc, usage(fmt.Errorf("--metrics-series %w", err))
		}
		sc.Series = &sel
	}
	return sc, nil
}

// stagePlan reads the --stages flags (nil without --stages).
func (c *flags) stagePlan() (*send.StagePlan, error) {
	if c.Stages == "" {
		return nil, nil
	}
	levels, err := pace.ParseStages(c.Stages)
	if err != nil {
		return nil, err
	}
	p := &send.StagePlan{Spec: c.Stages, Levels: levels, Duration: c.StageDuration, Requests: c.StageRequests,
		Cooldown: c.StageCooldown, UntilSLO: c.UntilSLO, MinGoodput: c.MinGoodput, Resolution: c.SLOResolution}
	if p.SLO, err = report.ParseSLO(c.SLO); err != nil {
		return nil, err
	}
	return p, nil
}

// stageLine is a stage's figures on one line.
func stageLine(s report.StageReport) string {
	ms := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f", *v)
	}
	line := fmt.Sprintf("stage %d (%s): %d requests, %.2f req/s, %.1f output tok/s, TTFT p50/p99 %s/%s ms, ITL p50/p99 %s/%s ms",
		s.Index, s.LevelString(), s.Requests, s.RequestThroughput, s.OutputTokenThroughput,
		ms(s.TTFTP50Ms), ms(s.TTFTP99Ms), ms(s.ITLP50Ms), ms(s.ITLP99Ms))
	if g := s.Goodput; g != nil {
		line += fmt.Sprintf(", goodput %.0f%% (%s)", 100*g.Fraction, strings.ReplaceAll(s.Verdict, "_", " "))
	}
	if s.Client != nil && s.Client.Saturated {
		line += "; the client was saturated: " + strings.Join(s.Client.Reasons, "; ")
	}
	return line
}

// searchLine says what --until-slo found.
func searchLine(r pace.Result, kind string) string {
	switch {
	case r.ClientLimited && r.OK:
		return fmt.Sprintf("the client, not the server, was the limit above %s %g: the server's limit is not found (lower send's load: more cores, --no-payload)", kind, r.Highest)
	case r.ClientLimited:
		return "the client, not the server, was the limit from the first stage: the server's limit is not found"
	case !r.OK:
		return "no stage met the SLO"
	case !r.Missed:
		return fmt.Sprintf("every stage met the SLO, up to %s %g: the limit is higher", kind, r.Highest)
	}
	return fmt.Sprintf("the highest %s meeting the SLO is %g (%g missed it)", kind, r.Highest, r.Lowest)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func usage(err error) error { return &cli.UsageError{Err: err} }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeRunRecord writes the islkit.run record (secrets removed).
func writeRunRecord(stdout io.Writer, c *flags, opts send.Config, b *send.Builder, convs []records.Conversation) error {
	var models []string
	for i := range convs {
		if m := b.Model(&convs[i]); m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	headers := slices.Collect(maps.Keys(c.Header))
	r := send.RunRecord(c.args, opts, c.Stream, models, len(convs), headers, c.Exact, time.Now())
	r.StartAt, r.Turns = c.StartAt, send.ShardTurns(convs, opts.Shard)
	w := jsonl.NewWriter(stdout)
	if err := w.Encode(r); err != nil {
		return err
	}
	return w.Flush()
}
