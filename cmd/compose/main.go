// Command compose turns a probe record into synthetic conversations whose
// requests have an exact ISL: the second filter of probe | compose | send |
// measure.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/vision/imagehdr"
	"github.com/islkit/islkit/internal/workload"
)

const description = `Compose synthetic conversations sized to an exact wire ISL.

Reads the probe record (stdin, or --probe FILE) and writes one conversation
record (kind "islkit.conversation") per line. All lengths are tokens of the
probed tokenizer.

Sizing follows AIPerf's ISL compensation: the first user turn gives up
per_request_fixed + per_msg_wrap (+ the marker when it lands there), later
turns per_msg_wrap; a marker on the shared system prompt makes that prompt
shorter by the marker's cost instead. With --exact (the default) every
request is then rendered exactly as send builds it (chat template, system
prompt, the pass-0 marker) and its text adjusted until the templated count
is the turn's target_isl: --isl for a first turn without system prompt;
with one, --isl + the prompt's length + one message wrap; a later turn's
request holds the history, so its target is the previous target + the
reply (--osl tokens + wrap) + its --isl. A target below what the template
and marker alone cost is marked "unreachable". --exact=false reproduces
AIPerf's average behaviour (probe constants only, no rendering).

Endpoints (--endpoint, the probe's by default; it must be the probe's):
  chat         /v1/chat/completions, as above.
  responses    /v1/responses: the same conversations, sized against the
               same render (the server turns "instructions", which carry
               the shared system prompt, and the "input" items back into
               these messages), counted with the tokenizer's special
               tokens as vLLM does.
  completions  /v1/completions: the prompt is bare text, never templated;
               --exact sizes it so that encode(prompt, add_special_tokens
               =true), the server's count, is --isl. One request per
               conversation: --turns must be 1, and there is no system
               prompt.
Cache-bust marker: chat and responses follow the routing table (a system
target lands on the system prompt, the Responses "instructions", and falls
back to the first user turn without one); for completions the prompt is
the first user turn: prefix targets go at its start, suffix targets at its
end, and a system target falls back to it.

Every run mints a fresh --benchmark-id (recorded in every conversation),
so the cache-bust markers of two runs differ whatever --seed is; the same
flags, probe record, --seed and --benchmark-id give byte-identical output.

Example:
  probe --tokenizer ./models/llama3 --apply-chat-template --cache-bust first_turn_prefix \
    | compose --isl 1000 --osl 200 --conversations 100 --turns 3 --seed 7 > convs.jsonl
`

type flags struct {
	Probe                    string  `help:"Probe record file (default: stdin)." placeholder:"FILE" type:"existingfile"`
	Tokenizer                string  `help:"Model (tokenizer.json, folder or ORG/NAME); must be the tokenizer the probe measured (SHA-256 checked). Default: the probe's --tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	Revision                 string  `help:"Hub revision of --tokenizer ORG/NAME (branch, tag or commit). Default: main with --tokenizer, else the probe's." placeholder:"REV"`
	ChatTemplate             string  `help:"Chat template file; must be the one the probe measured. Default: the probe's." placeholder:"FILE" type:"existingfile"`
	Renderer                 string  `help:"What renders a request: jinja, harmony, mistral or deepseek_v32 (as measure --renderer). Default: the probe's --renderer, else the server's choice by the model's config.json model_type." placeholder:"NAME"`
	TokenizerMode            string  `help:"vLLM's --tokenizer-mode: mistral reads the model's tekken.json (even beside a tokenizer.json; a Hub model's is downloaded) and renders with mistral-common's encoding (--renderer mistral); hf needs a tokenizer.json; auto (default): the folder's tokenizer.json, else its tekken or tiktoken file. Default: the probe's." placeholder:"MODE"`
	Now                      string  `help:"Pin strftime_now (e.g. 2025-07-10T12:00:00). Default: $ISLKIT_NOW, else the probe's --now, else the clock." placeholder:"TIME"`
	ISL                      int     `name:"isl" help:"Target input sequence length per user turn, in tokens (wire ISL of a first turn). Required unless --trace or --dataset; with --dataset it resizes every user turn." placeholder:"TOKENS"`
	ISLStddev                float64 `name:"isl-stddev" help:"Standard deviation of the per-turn ISL, in tokens (normal, redrawn while negative)." default:"0" placeholder:"TOKENS"`
	OSL                      int     `name:"osl" help:"max_tokens of each turn, in tokens; also the length of compose's synthetic assistant replies." default:"128" placeholder:"TOKENS"`
	OSLStddev                float64 `name:"osl-stddev" help:"Standard deviation of the OSL, in tokens; needs --osl." default:"0" placeholder:"TOKENS"`
	Conversations            int     `help:"Number of conversations to write." default:"100" placeholder:"N"`
	Turns                    int     `help:"Mean user turns per conversation." default:"1" placeholder:"N"`
	TurnsStddev              float64 `help:"Standard deviation of the turn count; needs --turns. A normal draw kept within 1 and 2·--turns − 1 (symmetric about the mean) and rounded, so that --turns stays the mean; the spread is at most what that range allows (none for --turns 1)." default:"0" placeholder:"N"`
	SharedSystemPromptLength int     `help:"Length of a synthetic system prompt shared by all conversations, in tokens (marker included when the marker lands on it); 0 = none." default:"0" placeholder:"TOKENS"`
	CacheBust                string  `help:"Cache-bust target; must equal the probe's (which is the default)." placeholder:"TARGET"`
	Endpoint                 string  `help:"Endpoint the requests are sized for: chat, completions or responses (see above); must equal the probe's (which is the default)." placeholder:"ENDPOINT"`
	Seed                     uint64  `help:"Random seed (turn counts, lengths, corpus windows)." default:"0"`
	BenchmarkID              string  `help:"Benchmark id in the marker digest, recorded in every conversation; give a run's id to reproduce its markers. Default: a fresh random one per run (12 hex digits), so a second run does not hit a prefix cache on the first run's markers." placeholder:"ID"`
	Corpus                   string  `help:"UTF-8 text file to cut prompts from. Default: Moby Dick (embedded)." placeholder:"FILE" type:"existingfile"`
	Model                    string  `help:"Model name written into each record for send's payload." placeholder:"NAME"`
	Server                   string  `help:"Server whose count every request is sized for, as measure --server counts it: vllm, sglang, transformers (apply_chat_template on the messages as given) or aiperf (AIPerf's own count); recorded on each conversation (send --exact counts with it)." default:"vllm" enum:"vllm,sglang,transformers,aiperf"`
	Exact                    bool    `help:"Render every request and make its templated count exact (--exact=false: AIPerf's average compensation)." default:"true" negatable:""`
	Workers                  int     `help:"Conversations composed in parallel (output is identical for any value)." default:"${cpus}"`
	Live                     bool    `help:"Write what send --exact needs to make every live request exact against the server's real replies: the model the conversations were composed for (composed_for) and, per turn, the corpus text that follows it (reserve: the previous turn's --osl draw + 32 tokens). Needs --exact (--dataset: always exact; the reserve continues the turn's own text, then the corpus)."`
	OverContext              string  `help:"With --dataset or --trace: what to do with a dialog or row whose request is above the model's context length (model_max_length in tokenizer_config.json), which a server refuses: skip leaves it out, keep composes it; either way each is warned about with its file, line, tokens and the context length (${enum})." enum:"skip,keep" default:"skip"`
	AllowOverContext         bool    `help:"Compose first requests longer than the model's context length (model_max_length in tokenizer_config.json), which a server refuses; without it such an --isl is an error. Lengths are at most 16777216 tokens either way."`
	PrefixGroups             int     `help:"Put conversation i in group i mod G: the first --prefix-length wire tokens of its first request (template header included) are identical within a group and differ between groups. Needs a suffix or no cache-bust target." default:"0" placeholder:"G"`
	PrefixLength             int     `help:"Shared prefix per group, in wire tokens; needs --prefix-groups." default:"0" placeholder:"TOKENS"`
	Trace                    string  `help:"Replay a trace instead of synthetic conversations: one single-turn request per row, target_isl = input_length, max_tokens = output_length, blocks that share hash ids share their wire tokens. Needs a suffix or no cache-bust target." placeholder:"FILE" type:"existingfile" group:"trace"`
	TraceFormat              string  `help:"Trace format." enum:"mooncake" default:"mooncake" group:"trace"`
	BlockSize                int     `help:"Tokens per trace hash id (Mooncake's block)." default:"512" placeholder:"TOKENS" group:"trace"`
	CacheBlockSize           int     `help:"Prefix-cache block (vLLM's default 16) in which each request's cache blocks are named, so send can write every request's expected_cached_tokens; 0 names none. Synthetic conversations are named only when this flag is given (one more encoding of every request)." default:"16" placeholder:"TOKENS" group:"trace"`
	Dataset                  string  `help:"Replay a dataset instead of synthetic conversations: the dataset's replies are the history and their token length max_tokens (else --osl). Without --isl the texts are kept and every request records its exact wire ISL; with --isl (and --isl-stddev) every user turn is cut, or continued from --corpus, until its request counts exactly its target_isl (the first: --isl, + one wrap + the system prompt when the dialog has one; later: the previous target + one wrap + the reply + --isl); a target below the template's own cost is marked unreachable. ShareGPT JSON/JSONL, OpenAI messages JSONL, or prompts ({\"prompt\"} lines or text lines)." placeholder:"FILE" type:"existingfile" group:"dataset"`
	Images                   int     `help:"Images per user turn (the mean; a vision-language model): synthetic images of --image-size, or files of --image-dir, before the turn's text as image_url parts (Responses: input_image), data URLs. The text is sized so that the whole request, image tokens included, counts the target." default:"0" placeholder:"N" group:"images"`
	ImagesStddev             float64 `help:"Standard deviation of the images per turn (normal, rounded, at least 0)." default:"0" placeholder:"N" group:"images"`
	ImageSize                string  `help:"Size of the synthetic images, WxH (sets --image-width-mean and --image-height-mean)." placeholder:"WxH" group:"images"`
	ImageWidthMean           int     `help:"Mean width of the synthetic images, in pixels." default:"0" placeholder:"PX" group:"images"`
	ImageWidthStddev         float64 `help:"Standard deviation of their width (AIPerf's positive normal)." default:"0" placeholder:"PX" group:"images"`
	ImageHeightMean          int     `help:"Mean height of the synthetic images, in pixels." default:"0" placeholder:"PX" group:"images"`
	ImageHeightStddev        float64 `help:"Standard deviation of their height." default:"0" placeholder:"PX" group:"images"`
	ImageFormat              string  `help:"Format of the synthetic images (${enum}): black but for a few bytes of the seed on the first row, so every image differs and is small on the wire; the same --seed gives the same bytes." enum:"png,jpeg" default:"png" group:"images"`
	ImageDir                 string  `help:"Draw the images from this folder's PNG, JPEG, WebP and GIF files instead of generating them." placeholder:"DIR" type:"existingdir" group:"images"`
	Processor                string  `help:"Folder of the model's image processing (config.json with preprocessor_config.json / processor_config.json). Default: the --tokenizer folder." placeholder:"DIR" type:"existingdir" group:"images"`
	FetchImages              bool    `name:"fetch-images" help:"With --dataset: read the first bytes of the dataset's remote image URLs (http, https) for their size, once per URL; without it only data URLs are counted and a dialog with a remote one fails." group:"images"`
	LimitMMPerPrompt         string  `name:"limit-mm-per-prompt" help:"The server's --limit-mm-per-prompt ({\"image\":4} or image=4): a request with more images is refused." placeholder:"LIMITS" group:"images"`
	DatasetFormat            string  `help:"Dataset format (${enum}; auto detects it)." enum:"auto,sharegpt,openai,prompts" default:"auto" group:"dataset"`
}

// signals gives the context a signal cancels (tests deliver one).
var signals = cli.Signals

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f flags
	kctx, code, done := cli.Parse("compose", args, stdout, stderr, &f,
		cli.Description(description), kong.Vars{"cpus": fmt.Sprint(runtime.NumCPU())})
	if done {
		return code
	}
	set := cli.Given(kctx)
	if f.Trace != "" && f.Dataset != "" {
		return cli.Fail(stderr, "compose", cli.Usagef("--trace and --dataset: one workload at a time"))
	}
	if err := cli.OnlyWith(set, f.Trace == "", "to conversations (synthetic or --dataset)", "a trace's requests are single turns, exact as composed, and their texts share the trace's blocks", "live"); err != nil {
		return cli.Fail(stderr, "compose", err)
	}
	if err := cli.OnlyWith(set, f.Dataset != "" || f.Trace != "", "with --dataset or --trace", "synthetic conversations above the context length are refused unless --allow-over-context", "over-context"); err != nil {
		return cli.Fail(stderr, "compose", err)
	}
	if f.Dataset != "" {
		return cli.Fail(stderr, "compose", f.runDataset(stdin, stdout, stderr, set))
	}
	if f.Trace != "" {
		return cli.Fail(stderr, "compose", f.runTrace(stdin, stdout, stderr, set))
	}
	return cli.Fail(stderr, "compose", f.run(stdin, stdout, stderr, set))
}

// run composes; set holds the flags given on the command line, so a
// stddev without its mean can be refused.
func (f *flags) run(stdin io.Reader, stdout, stderr io.Writer, set map[string]bool) error {
	if !set["isl"] {
		return cli.Usagef("--isl is required (or --trace FILE, or --dataset FILE)")
	}
	var err error
	opts := compose.Options{
		ISL: f.ISL, ISLStddev: f.ISLStddev, OSL: f.OSL, OSLStddev: f.OSLStddev,
		Conversations: f.Conversations, Turns: f.Turns, TurnsStddev: f.TurnsStddev,
		SharedSystemPromptLength: f.SharedSystemPromptLength,
		Seed:                     f.Seed, BenchmarkID: f.BenchmarkID, Exact: f.Exact, Model: f.Model,
		Workers: f.Workers, AllowOverContext: f.AllowOverContext, Live: f.Live,
		PrefixGroups: f.PrefixGroups, PrefixLength: f.PrefixLength, Server: serverprofile.Profile(f.Server),
		CacheBlockSize: given(set, "cache-block-size", f.CacheBlockSize),
		ISLSet:         set["isl"], OSLSet: set["osl"], TurnsSet: set["turns"],
	}
	if opts.Images, err = f.imageOptions(set); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if f.Workers < 1 {
		return cli.Usagef("--workers must be at least 1")
	}
	ctx, stop := signals()
	defer stop()
	p, m, err := f.load(ctx, stdin)
	if err != nil {
		return err
	}
	if opts.Images.PerTurn > 0 {
		if m.Vision, err = f.vision(m); err != nil {
			return err
		}
	}
	text, err := corpus.Load(f.Corpus)
	if err != nil {
		return err
	}
	opts.Endpoint = p.Endpoint.OrChat()
	c, err := compose.New(p, m, text, opts)
	if err != nil {
		return err
	}
	err = emit(ctx, stdout, c.Run)
	for _, warning := range c.Warnings() {
		fmt.Fprintf(stderr, "compose: warning: %s\n", warning)
	}
	return err
}

// load reads the probe record (a signal stops the read too, even one
// blocked on a FIFO) and loads the model it measured.
func (f *flags) load(ctx context.Context, stdin io.Reader) (*records.Probe, *compose.Model, error) {
	in, name := stdin, "<stdin>"
	if f.Probe != "" {
		file, err := os.Open(f.Probe)
		if err != nil {
			return nil, nil, err
		}
		defer file.Close()
		in, name = file, f.Probe
	}
	var p *records.Probe
	_, err := cli.Interruptible(ctx, func() error {
		var err error
		p, err = compose.ReadProbe(in, name)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if f.Endpoint != "" {
		ep, err := endpoint.Parse(f.Endpoint)
		if err != nil {
			return nil, nil, cli.Usagef("--endpoint: %w", err)
		}
		if ep != p.Endpoint.OrChat() {
			return nil, nil, cli.Usagef("--endpoint %s disagrees with the probe record (%s): the overhead was measured for %s; rerun probe with --endpoint %s", ep, p.Endpoint.OrChat(), p.Endpoint.OrChat(), ep)
		}
	}
	if f.CacheBust != "" {
		t, err := cachebust.ParseTarget(f.CacheBust)
		if err != nil {
			return nil, nil, cli.Usagef("--cache-bust: %w", err)
		}
		if t != p.CacheBust {
			return nil, nil, cli.Usagef("--cache-bust %s disagrees with the probe record (%s): the marker cost was measured for %s; rerun probe with --cache-bust %s", t, p.CacheBust, p.CacheBust, t)
		}
	}
	m, err := compose.LoadModelWith(p, model.Options{Tokenizer: modelsrc.Spec(f.Tokenizer, f.Revision), ChatTemplate: f.ChatTemplate, Now: f.Now, Renderer: f.Renderer, TokenizerMode: f.TokenizerMode, Server: f.Server})
	if err != nil {
		return nil, nil, err
	}
	return p, m, nil
}

// emit runs a composer's Run on stdout until it ends or a signal stops it.
func emit(ctx context.Context, stdout io.Writer, run func(context.Context, *jsonl.Writer) error) error {
	out := cli.NewOutput(stdout)
	w := jsonl.NewWriter(out)
	abandoned, err := cli.Interruptible(ctx, func() error { return run(ctx, w) })
	if abandoned {
		cli.StopOutput(w, out)
		return err
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return cli.Cause(ctx, cli.Quiet(err))
}

// given is v when the flag was spelled out on the command line, else 0:
// synthetic conversations name their cache blocks only when asked, since
// it costs one more encoding of every request.
func given(set map[string]bool, name string, v int) int {
	if set[name] {
		return v
	}
	return 0
}

// traceOnly are the flags --trace replaces (the trace gives every
// request's lengths and count).
var traceOnly = []string{"isl", "isl-stddev", "osl", "osl-stddev", "conversations", "turns", "turns-stddev", "shared-system-prompt-length", "exact", "prefix-groups", "prefix-length"}

// datasetOnly are the flags --dataset replaces: the dataset gives the
// conversations, their turns and replies (--isl and --isl-stddev resize its
// user turns; every request is sized exactly either way).
var datasetOnly = []string{"osl-stddev", "conversations", "turns", "turns-stddev", "shared-system-prompt-length", "exact", "block-size", "trace-format", "prefix-groups", "prefix-length"}

// checkWorkload refuses, for --trace and --dataset (workload), the flags
// the input replaces (why says why) and the flags' own bad values.
func (f *flags) checkWorkload(set map[string]bool, replaced []string, workload, why string) error {
	if err := cli.OnlyWith(set, false, "without "+workload, why, replaced...); err != nil {
		return err
	}
	if f.Workers < 1 {
		return cli.Usagef("--workers must be at least 1")
	}
	if f.CacheBlockSize < 0 {
		return cli.Usagef("--cache-block-size must not be negative (got %d); 0 names no cache blocks", f.CacheBlockSize)
	}
	return nil
}

// reportSkipped prints each skipped input line and their count.
func reportSkipped(stderr io.Writer, file string, skipped []workload.Skipped, total int, what string) {
	for _, s := range skipped {
		fmt.Fprintf(stderr, "compose: %s: %s\n", s.Where(file), s.Reason)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(stderr, "compose: %d of %d %s skipped\n", len(skipped), total, what)
	}
}

// reportOverContext warns about each dialog or row above the model's
// context length, with its numbers, and says how many there were and
// what was done with them (--over-context).
func reportOverContext(stderr io.Writer, file string, over []workload.Skipped, total int, what, mode string) {
	for _, o := range over {
		fmt.Fprintf(stderr, "compose: warning: %s: %s\n", o.Where(file), o.Reason)
	}
	if len(over) > 0 {
		done := "skipped"
		if mode == string(compose.OverContextKeep) {
			done = "kept"
		}
		fmt.Fprintf(stderr, "compose: warning: %d of %d %s above the model's context length, %s (--over-context %s)\n", len(over), total, what, done, mode)
	}
}

// runDataset composes one conversation per dataset dialog.
func (f *flags) runDataset(stdin io.Reader, stdout, stderr io.Writer, set map[string]bool) error {
	if err := f.checkWorkload(set, datasetOnly, "--dataset", "the dataset gives the conversations, their turns and replies, and every request is sized exactly (--isl resizes the user turns)"); err != nil {
		return err
	}
	if set["isl-stddev"] && !set["isl"] {
		return cli.Usagef("--isl-stddev needs --isl (a spread without a mean)")
	}
	if err := cli.OnlyWith(set, false, "with --images", "they say what the images of each turn are (a dataset's images are its own)", imageFlags[:len(imageFlags)-2]...); err != nil {
		return err
	}
	if set["isl"] && f.ISL < 1 {
		return cli.Usagef("--isl must be at least 1 token (got %d)", f.ISL)
	}
	file, err := os.Open(f.Dataset)
	if err != nil {
		return err
	}
	defer file.Close()
	dialogs, skipped, format, err := workload.ReadDataset(file, f.Dataset, f.DatasetFormat)
	if err != nil {
		return err
	}
	ctx, stop := signals()
	defer stop()
	p, m, err := f.load(ctx, stdin)
	if err != nil {
		return err
	}
	// A dataset's image parts are counted with the model's processor.
	if m.Vision, err = f.vision(m); err != nil {
		return err
	}
	if m.Vision != nil && f.FetchImages {
		m.Vision.Fetch = imagehdr.NewFetcher(nil, 30*time.Second).Header
	}
	opts := compose.DatasetOptions{OSL: f.OSL, Seed: f.Seed, BenchmarkID: f.BenchmarkID,
		Model: f.Model, Workers: f.Workers, CacheBlockSize: f.CacheBlockSize, AllowOverContext: f.AllowOverContext, Live: f.Live,
		OverContext: compose.OverContext(f.OverContext), Server: serverprofile.Profile(f.Server)}
	if set["isl"] {
		opts.ISL, opts.ISLStddev = f.ISL, f.ISLStddev
	}
	if set["isl"] || f.Live {
		if opts.Corpus, err = corpus.Load(f.Corpus); err != nil {
			return err
		}
	}
	d, err := compose.NewDataset(p, m, opts)
	if err != nil {
		return err
	}
	err = emit(ctx, stdout, func(ctx context.Context, w *jsonl.Writer) error { return d.Run(ctx, w, dialogs) })
	reportSkipped(stderr, f.Dataset, append(skipped, d.Skipped()...), len(skipped)+len(dialogs), format+" conversations")
	reportOverContext(stderr, f.Dataset, d.OverContext(), len(dialogs), "dialog(s)", f.OverContext)
	for _, warning := range d.Warnings() {
		fmt.Fprintf(stderr, "compose: warning: %s\n", warning)
	}
	return err
}

// runTrace composes one request per trace row.
func (f *flags) runTrace(stdin io.Reader, stdout, stderr io.Writer, set map[string]bool) error {
	if err := f.checkWorkload(set, traceOnly, "--trace", "the trace sets every request's lengths and count"); err != nil {
		return err
	}
	if f.BlockSize < 1 {
		return cli.Usagef("--block-size must be at least 1 token (got %d)", f.BlockSize)
	}
	file, err := os.Open(f.Trace)
	if err != nil {
		return err
	}
	defer file.Close()
	rows, skipped, err := workload.ReadMooncake(file, f.Trace, f.BlockSize)
	if err != nil {
		return err
	}
	ctx, stop := signals()
	defer stop()
	p, m, err := f.load(ctx, stdin)
	if err != nil {
		return err
	}
	text, err := corpus.Load(f.Corpus)
	if err != nil {
		return err
	}
	tr, err := compose.NewTracer(p, m, text, compose.TraceOptions{
		BlockSize: f.BlockSize, CacheBlockSize: f.CacheBlockSize, Seed: f.Seed, BenchmarkID: f.BenchmarkID, Model: f.Model, Workers: f.Workers,
		OverContext: compose.OverContext(f.OverContext), Server: serverprofile.Profile(f.Server)})
	if err != nil {
		return err
	}
	reportSkipped(stderr, f.Trace, skipped, len(skipped)+len(rows), "trace rows")
	err = emit(ctx, stdout, func(ctx context.Context, w *jsonl.Writer) error { return tr.Run(ctx, w, rows) })
	reportOverContext(stderr, f.Trace, tr.OverContext(), len(rows), "trace row(s)", f.OverContext)
	return err
}
