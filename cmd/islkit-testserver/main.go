// Command islkit-testserver runs internal/testserver for demos: an
// OpenAI-compatible server that counts prompt tokens like vLLM (or the
// server -server names).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "listen address (loopback)")
	model := flag.String("tokenizer", "", "model folder, tokenizer.json or ORG/NAME (default: embedded Qwen3)")
	noTok := flag.Bool("no-tokenize", false, "skip prompt accounting (benchmark mode)")
	tps := flag.Float64("tokens-per-second", 0, "streamed token rate (0: at once)")
	ttft := flag.Duration("ttft", 0, "delay before the first token")
	faultRate := flag.Float64("fault-rate", 0, "fraction of requests that get a fault")
	faults := flag.String("faults", "", "comma-separated fault kinds ("+strings.Join(testserver.FaultKinds(), ",")+"; default all)")
	seed := flag.Uint64("seed", 1, "fault seed")
	server := flag.String("server", "vllm", "count prompts as this server does: "+strings.Join(serverprofile.Names(), ", "))
	flag.Parse()
	profile, err := serverprofile.Parse(*server)
	if err != nil {
		fail(err)
	}
	cfg := testserver.Config{NoTokenize: *noTok, TokensPerSecond: *tps, TTFT: *ttft, FaultRate: *faultRate, Seed: *seed, Profile: profile}
	if *faults != "" {
		cfg.Faults = strings.Split(*faults, ",")
	}
	if !*noTok {
		src, err := modelsrc.Resolve(*model)
		if err != nil {
			fail(err)
		}
		cfg.Model = src
	}
	s, err := testserver.New(cfg)
	if err != nil {
		fail(err)
	}
	if err := s.Start(*addr); err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, "islkit-testserver: listening on", s.URL())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	<-ch
	s.Close()
	fmt.Fprintf(os.Stderr, "islkit-testserver: %d requests, faults %v\n", s.Requests(), s.Faults())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "islkit-testserver:", err)
	os.Exit(1)
}
