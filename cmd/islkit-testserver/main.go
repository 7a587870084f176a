// Command islkit-testserver runs internal/testserver for demos: an
// OpenAI-compatible server that counts prompt tokens like vLLM (or the
// server -server names).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/islkit/islkit/internal/cli"
	islmodel "github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/version"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := cli.Signals()
	defer stop()
	return serve(ctx, args, stdout, stderr, nil)
}

// flagOf names the flag of each testserver.Config field.
var flagOf = map[string]string{"FaultRate": "fault-rate", "TokensPerSecond": "tokens-per-second",
	"TTFT": "ttft", "Faults": "faults", "NaturalLength": "natural-length",
	"PrefixCacheBlock": "prefix-cache-block", "OutputServer": "output-server", "Reasoning": "reasoning"}

// serve runs the server until ctx is cancelled; ready, when set, gets the
// server's URL once it listens.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(url string)) int {
	fs := flag.NewFlagSet("islkit-testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address (loopback)")
	model := fs.String("tokenizer", "", "model folder, tokenizer.json or ORG/NAME (default: embedded Qwen3)")
	revision := fs.String("revision", "main", "Hub revision of an ORG/NAME -tokenizer")
	noTok := fs.Bool("no-tokenize", false, "skip prompt accounting (benchmark mode)")
	tps := fs.Float64("tokens-per-second", 0, "streamed token rate (0: at once)")
	ttft := fs.Duration("ttft", 0, "delay before the first token")
	prefill := fs.Duration("prefill-per-token", 0, "add this to -ttft per prompt token (a prefill time that grows with the prompt)")
	maxConc := fs.Int("max-concurrency", 0, "serve at most N requests at once, the others waiting in arrival order (a known capacity for send --stages to find; 0: no limit); each takes -ttft + -prefill-per-token per prompt token, then 1/-tokens-per-second per output token")
	faultRate := fs.Float64("fault-rate", 0, "fraction of requests that get a fault")
	faults := fs.String("faults", "", "comma-separated fault kinds ("+strings.Join(testserver.FaultKinds(), ",")+"; default all; also "+testserver.FaultIgnoreMinTokens+": the server ignores ignore_eos and min_tokens, with -random-stop; "+testserver.FaultDoublePromptTokens+": /metrics counts the prompt tokens twice)")
	seed := fs.Uint64("seed", 1, "fault seed")
	cacheBlock := fs.Int("prefix-cache-block", 0, "unbounded automatic prefix cache in blocks of this many tokens, reported as usage.prompt_tokens_details.cached_tokens (vLLM: 16; 0: none)")
	metrics := fs.Bool("metrics", true, "serve GET /metrics: the server's counters under vLLM's names (prompt and generation tokens, requests, prefix-cache queries and hits, TTFT), for send --scrape-metrics")
	showVersion := fs.Bool("version", false, "print the version and exit")
	server := fs.String("server", "vllm", "count prompts as this server does: "+strings.Join(serverprofile.Names(), ", "))
	tokMode := fs.String("tokenizer-mode", "auto", "vLLM's --tokenizer-mode: mistral reads the model's tekken.json (even beside a tokenizer.json) and renders with mistral-common's encoding; hf needs a tokenizer.json; auto: the folder's tokenizer.json, else its tekken or tiktoken file")
	renderer := fs.String("renderer", "", "render chat requests with: jinja, harmony or deepseek_v32 (default: as the -server chooses by the model's config.json model_type: under vllm gpt_oss is harmony, deepseek_v32 is deepseek_v32)")
	closeAfter := fs.Bool("close-after-stream", false, "close the connection after each streamed response while advertising Keep-Alive (as llama.cpp's llama-server does)")
	processor := fs.String("processor", "", "folder of the model's image processing (config.json with preprocessor_config.json / processor_config.json) for counting images as vLLM does (default: the -tokenizer folder; none: images are refused as a text-only model's server does)")
	mmLimit := fs.String("limit-mm-per-prompt", "", `vLLM's --limit-mm-per-prompt ({"image":4} or image=4): more images are refused (default: no limit)`)
	outputServer := fs.String("output-server", "", "honour this server's output-length parameters: "+strings.Join(serverprofile.OutputServers(), ", ")+" (default: -server's): ignore_eos and min_tokens, llama.cpp's n_predict and ignore_eos, none for openai")
	reasoning := fs.Int("reasoning", 0, "make the first N tokens of every chat reply reasoning (delta.reasoning_content), counted in completion_tokens and reported as completion_tokens_details.reasoning_tokens")
	randomStop := fs.Bool("random-stop", false, "end each reply at a random length up to max_tokens (finish_reason stop), as a real model does: drawn from -seed and the request, so the same request gets the same reply whatever the order")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage // the flag package has printed why
	}
	if *showVersion {
		fmt.Fprintln(stdout, "islkit-testserver", version.Full())
		return cli.ExitOK
	}
	profile, err := serverprofile.Parse(*server)
	if err != nil {
		fmt.Fprintf(stderr, "islkit-testserver: -server: %v\n", err)
		return cli.ExitUsage
	}
	if _, err := serverprofile.ParseRenderer(*renderer); err != nil {
		fmt.Fprintf(stderr, "islkit-testserver: -renderer: %v\n", err)
		return cli.ExitUsage
	}
	cfg := testserver.Config{Renderer: *renderer, NoTokenize: *noTok, TokensPerSecond: *tps, TTFT: *ttft, PrefillPerToken: *prefill, MaxConcurrency: *maxConc, FaultRate: *faultRate, Seed: *seed,
		CloseAfterStream: *closeAfter, Profile: profile, PrefixCacheBlock: *cacheBlock}
	cfg.RandomStop, cfg.Metrics = *randomStop, *metrics
	cfg.OutputServer, cfg.Reasoning = *outputServer, *reasoning
	if *faults != "" {
		cfg.Faults = strings.Split(*faults, ",")
	}
	const name = "islkit-testserver"
	if err := cfg.Validate(); err != nil {
		var ce *testserver.ConfigError
		if errors.As(err, &ce) {
			err = fmt.Errorf("-%s %w", flagOf[ce.Field], ce.Err)
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return cli.ExitUsage
	}
	if !*noTok {
		src, err := modelsrc.ResolveMode(modelsrc.Spec(*model, *revision), *tokMode)
		if err != nil {
			return cli.Fail(stderr, name, err)
		}
		islmodel.AsServer(src, string(profile))
		if *tokMode == modelsrc.ModeMistral {
			if cfg.Renderer != "" && cfg.Renderer != serverprofile.RendererMistral {
				fmt.Fprintf(stderr, "%s: -renderer %s with -tokenizer-mode mistral: that mode renders with mistral-common\n", name, cfg.Renderer)
				return cli.ExitUsage
			}
			cfg.Renderer = serverprofile.RendererMistral
		}
		cfg.Model = src
		vis, err := serverprofile.VisionFlags(*processor, src.Dir, *mmLimit)
		if err != nil {
			fmt.Fprintf(stderr, "%s: -%v\n", name, strings.TrimPrefix(err.Error(), "--"))
			return cli.ExitUsage
		}
		cfg.Vision = vis
	}
	s, err := testserver.New(cfg)
	if err != nil {
		return cli.Fail(stderr, name, err)
	}
	if err := s.Start(*addr); err != nil {
		return cli.Fail(stderr, name, err)
	}
	fmt.Fprintln(stderr, "islkit-testserver: listening on", s.URL())
	if ready != nil {
		ready(s.URL())
	}
	<-ctx.Done()
	s.Close()
	fmt.Fprintf(stderr, "islkit-testserver: %d requests, faults %v\n", s.Requests(), s.Faults())
	return cli.ExitOK
}
