// Command probe measures a model's chat-template overhead and cache-bust
// marker cost: the first filter of probe | compose | send | measure.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/alecthomas/kong"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/verify"
)

const description = `Measure what compose must subtract so that wire ISL is exact.

Writes ONE JSON record (kind "islkit.probe") on stdout:

  template_overhead  AIPerf's two-equation chat-template probe: three
                     sample texts, each rendered as [user] and
                     [user, assistant, user] with the generation prompt,
                     rendered to text and encoded without special tokens;
                     per_msg_wrap = (triple - single - 2*bare) / 2 and
                     per_request_fixed = single - bare - wrap, averaged over
                     the samples and rounded half-to-even (tokens). Zero,
                     with "reason", without --apply-chat-template, without
                     a template, when the template raises, or when a sample
                     gives a negative value.
  marker_tokens      the cache-bust marker's cost (tokens): the mean over 8
                     markers ("estimator", i, i, "estimator-i") in the
                     target's orientation, rounded half-to-even; 0 for none.
  tokenizer, chat_template
                     provenance: SHA-256 of tokenizer.json and of the
                     template source, special tokens, num_special_tokens_to_add.

  verify             with --verify-url: the server's usage.prompt_tokens
                     for the six probe conversations next to ours.

Examples:
  probe --tokenizer ./models/llama3 --apply-chat-template --cache-bust first_turn_prefix \
    | compose --isl 1000 --conversations 100 | send ... | measure ...
  probe --tokenizer ./models/llama3 --apply-chat-template --verify-url http://127.0.0.1:8000 --model llama3
`

type flags struct {
	Tokenizer         string `help:"Model: a tokenizer.json file, a model folder, or ORG/NAME from the local HuggingFace cache (never downloaded). Default: the embedded Qwen3 tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	ChatTemplate      string `help:"Jinja chat template file that replaces the model's own." placeholder:"FILE" type:"existingfile"`
	ApplyChatTemplate bool   `help:"Probe the chat template (AIPerf's --apply-chat-template). Off: no template work at all and both overheads are 0 tokens."`
	CacheBust         string `help:"Cache-bust marker target: none, system_prefix, system_suffix, first_turn_prefix, first_turn_suffix." default:"none" placeholder:"TARGET"`
	Now               string `help:"Pin strftime_now for templates that print the date (e.g. 2025-07-10T12:00:00); default: $ISLKIT_NOW, else the clock. compose reuses it." placeholder:"TIME"`

	VerifyURL string        `name:"verify-url" help:"Also send the probe conversations (max_tokens 1) to this OpenAI-compatible server and compare its usage.prompt_tokens with our templated counts; the record gets \"verify\", and a difference exits 1." placeholder:"URL"`
	Model     string        `help:"Model name for --verify-url requests." default:"default"`
	APIKey    string        `name:"api-key" help:"Bearer token for --verify-url." env:"OPENAI_API_KEY"`
	Timeout   time.Duration `help:"Timeout of each --verify-url request." default:"60s"`
	Server    string        `help:"The server behind --verify-url, whose preprocessing our counts follow: vllm, sglang, transformers or aiperf; the record's verify.profile names it." default:"vllm" enum:"vllm,sglang,transformers,aiperf"`
}

func main() {
	var f flags
	cli.Parse("probe", &f, kong.Description(description))
	os.Exit(run(&f))
}

func run(f *flags) int {
	target, err := cachebust.ParseTarget(f.CacheBust)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: --cache-bust: %v\n", err)
		return cli.ExitUsage
	}
	now, err := chat.ResolveNow(f.Now)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: %v\n", err)
		return cli.ExitUsage
	}
	// Resolved once: probe and --verify-url share the parsed tokenizer.
	src, err := modelsrc.Resolve(f.Tokenizer)
	if err != nil {
		return cli.Fail("probe", err)
	}
	rec, err := probe.Run(probe.Options{
		Source:            src,
		ChatTemplate:      f.ChatTemplate,
		ApplyChatTemplate: f.ApplyChatTemplate,
		CacheBust:         target,
		Now:               now,
	})
	if err != nil {
		return cli.Fail("probe", err)
	}
	code := cli.ExitOK
	if f.VerifyURL != "" {
		if rec.Verify, err = verifyServer(f, src, now); err != nil {
			return cli.Fail("probe", err)
		}
		if !rec.Verify.Agree {
			for _, r := range rec.Verify.Requests {
				if r.Diff != 0 {
					fmt.Fprintf(os.Stderr, "probe: %s counts sample %d (%d messages) as %d tokens, we count %d (%+d)\n",
						f.VerifyURL, r.Sample, r.Messages, r.Server, r.Ours, r.Diff)
				}
			}
			fmt.Fprintln(os.Stderr, "probe: the server tokenizes or templates differently from this model folder: wire ISL will not be exact")
			code = cli.ExitFailed
		}
	}
	if rec.Overhead.Reason != "" && f.ApplyChatTemplate {
		// Zeros are a valid answer, but a user who asked for the template
		// should know compensation is off.
		fmt.Fprintf(os.Stderr, "probe: warning: no chat-template compensation: %s\n", rec.Overhead.Reason)
	}
	w := jsonl.NewWriter(os.Stdout)
	err = w.Encode(rec)
	if err == nil {
		err = w.Flush()
	}
	if err = jsonl.Quiet(err); err != nil {
		return cli.Fail("probe", err)
	}
	return code
}

// verifyServer asks --verify-url to count the probe conversations.
func verifyServer(f *flags, src *modelsrc.Source, now time.Time) (*records.ProbeVerify, error) {
	tok, err := src.Tokenizer()
	if err != nil {
		return nil, err
	}
	tmpl, err := chat.LoadFS(src.FS, f.ChatTemplate)
	if errors.Is(err, chat.ErrNoTemplate) {
		tmpl = nil // counted bare, as a server without a template would
	} else if err != nil {
		return nil, fmt.Errorf("%s: chat template: %w", src.Name, err)
	}
	ctx, stop := cli.Signals()
	defer stop()
	return verify.Run(ctx, verify.Options{URL: f.VerifyURL, APIKey: f.APIKey, Model: f.Model,
		Template: tmpl, Counter: tok, Now: now, Timeout: f.Timeout, Profile: serverprofile.Profile(f.Server)})
}
