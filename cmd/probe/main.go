// Command probe measures a model's chat-template overhead and cache-bust
// marker cost: the first filter of probe | compose | send | measure.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
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
  endpoint           --endpoint: chat (the default) as above; responses
                     the same, plus the special tokens the tokenizer adds
                     (vLLM encodes a Responses render with them: a
                     BOS-adding tokenizer whose template prints a BOS
                     counts two); completions does no template work, and
                     per_request_fixed is the special tokens the tokenizer
                     adds to a bare prompt (vLLM's add_special_tokens=true).
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
	Tokenizer         string `help:"Model: a tokenizer.json file, a model folder, or ORG/NAME from the Hugging Face Hub (downloaded into the shared HF cache; HF_TOKEN, HF_HUB_OFFLINE apply). Default: the embedded Qwen3 tokenizer." placeholder:"PATH|DIR|ORG/NAME"`
	Revision          string `help:"Hub revision of --tokenizer ORG/NAME: branch, tag or commit (a cached commit needs no network)." default:"main" placeholder:"REV"`
	Renderer          string `help:"What renders a chat request: jinja (the chat template), harmony (openai_harmony, as vLLM renders gpt-oss) or deepseek_v32 (DeepSeek-V3.2's encoder, as vLLM runs it); the overhead is measured through it and compose and send --exact follow it. Default: the server's choice by the model's config.json model_type. mistral (mistral-common's encoding, as vLLM renders a Mistral-format model). With --apply-chat-template or --verify-url." placeholder:"NAME"`
	TokenizerMode     string `help:"vLLM's --tokenizer-mode: mistral reads the model's tekken.json (even beside a tokenizer.json; a Hub model's is downloaded) and renders with mistral-common's encoding (--renderer mistral); hf needs a tokenizer.json; auto (default): the folder's tokenizer.json, else its tekken or tiktoken file." placeholder:"MODE"`
	ChatTemplate      string `help:"Jinja chat template file that replaces the model's own (with --apply-chat-template or --verify-url)." placeholder:"FILE" type:"existingfile"`
	ApplyChatTemplate bool   `help:"Probe the chat template (AIPerf's --apply-chat-template). Off: no template work at all and both overheads are 0 tokens."`
	CacheBust         string `help:"Cache-bust marker target: none, system_prefix, system_suffix, first_turn_prefix, first_turn_suffix." default:"none" placeholder:"TARGET"`
	Endpoint          string `help:"Endpoint the requests go to: chat, completions or responses; compose sizes for it." default:"chat" placeholder:"ENDPOINT"`
	Now               string `help:"Pin strftime_now for templates that print the date (e.g. 2025-07-10T12:00:00); default: $ISLKIT_NOW, else the clock. compose reuses it." placeholder:"TIME"`

	VerifyURL string        `name:"verify-url" help:"Also send the probe conversations (max_tokens 1) to this OpenAI-compatible server and compare its usage.prompt_tokens with our templated counts; the record gets \"verify\", and a difference exits 1." placeholder:"URL"`
	Model     string        `help:"Model name for --verify-url requests." default:"default"`
	APIKey    string        `name:"api-key" help:"Bearer token for --verify-url." env:"OPENAI_API_KEY"`
	Timeout   time.Duration `help:"Timeout of each --verify-url request." default:"60s"`
	Server    string        `help:"The server behind --verify-url, whose preprocessing our counts follow: vllm, sglang, transformers or aiperf; the record's verify.profile names it. vllm and sglang also build a Llama-class tokenizer as their transformers 5 does (huggingface/transformers#45488; the record's tokenizer.build says so), which compose --server vllm or sglang expects." default:"vllm" enum:"vllm,sglang,transformers,aiperf"`
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f flags
	if _, code, done := cli.Parse("probe", args, stdout, stderr, &f, cli.Description(description)); done {
		return code
	}
	code, err := f.run(stdout, stderr)
	if err = cli.Quiet(err); err != nil {
		return cli.Fail(stderr, "probe", err)
	}
	return code
}

func (f *flags) run(stdout, stderr io.Writer) (int, error) {
	target, err := cachebust.ParseTarget(f.CacheBust)
	if err != nil {
		return 0, cli.Usagef("--cache-bust: %w", err)
	}
	ep, err := endpoint.Parse(f.Endpoint)
	if err != nil {
		return 0, cli.Usagef("--endpoint: %w", err)
	}
	if ep != endpoint.Chat && f.VerifyURL != "" {
		return 0, cli.Usagef("--verify-url sends chat requests: use it with --endpoint chat")
	}
	if !ep.Templated() && f.ApplyChatTemplate {
		return 0, cli.Usagef("--endpoint %s: the server never templates a completions prompt; drop --apply-chat-template", ep)
	}
	// Without either, no template is rendered and compose drops it.
	if err := cli.OnlyWith(map[string]bool{"chat-template": f.ChatTemplate != "", "renderer": f.Renderer != ""}, f.ApplyChatTemplate || f.VerifyURL != "",
		"with --apply-chat-template or --verify-url", "give one of them, or leave it out", "chat-template", "renderer"); err != nil {
		return 0, err
	}
	// Loaded once: probe and --verify-url share the parsed model.
	m, err := model.Load(model.Options{Tokenizer: modelsrc.Spec(f.Tokenizer, f.Revision), ChatTemplate: f.ChatTemplate, Now: f.Now, Renderer: f.Renderer, TokenizerMode: f.TokenizerMode, Server: f.Server})
	if err != nil {
		return 0, err
	}
	rec, err := probe.Run(probe.Options{
		Source:            m.Source,
		ChatTemplate:      f.ChatTemplate,
		ApplyChatTemplate: f.ApplyChatTemplate,
		CacheBust:         target,
		Now:               m.Now,
		Endpoint:          ep,
		Renderer:          f.Renderer,
	})
	if err != nil {
		return 0, err
	}
	code := cli.ExitOK
	if f.VerifyURL != "" {
		if rec.Verify, err = verifyServer(f, m); err != nil {
			return 0, err
		}
		if !rec.Verify.Agree {
			for _, r := range rec.Verify.Requests {
				if r.Diff != 0 {
					fmt.Fprintf(stderr, "probe: %s counts sample %d (%d messages) as %d tokens, we count %d (%+d)\n",
						f.VerifyURL, r.Sample, r.Messages, r.Server, r.Ours, r.Diff)
				}
			}
			fmt.Fprintln(stderr, "probe: the server tokenizes or templates differently from this model folder: wire ISL will not be exact")
			code = cli.ExitFailed
		}
	}
	if rec.Overhead.Reason != "" && f.ApplyChatTemplate {
		// Zeros are a valid answer, but a user who asked for the template
		// should know compensation is off.
		fmt.Fprintf(stderr, "probe: warning: no chat-template compensation: %s\n", rec.Overhead.Reason)
	}
	w := jsonl.NewWriter(stdout)
	err = w.Encode(rec)
	if err == nil {
		err = w.Flush()
	}
	return code, err
}

// verifyServer asks --verify-url to count the probe conversations.
func verifyServer(f *flags, m *model.Model) (*records.ProbeVerify, error) {
	if m.TemplateErr != nil {
		return nil, m.TemplateErr
	}
	// A model without a template is counted bare, as a server without one
	// would.
	ctx, stop := cli.Signals()
	defer stop()
	return verify.Run(ctx, verify.Options{URL: f.VerifyURL, APIKey: f.APIKey, Model: f.Model,
		Template: m.Template, Counter: m.Tokenizer, Now: m.Now, Timeout: f.Timeout, Profile: serverprofile.Profile(f.Server)})
}
