package serverprofile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/endpoint"
)

// Output-length servers: servers send can ask for an exact output length
// (send --exact-osl) but whose prompt preprocessing islkit has no rules
// for. Their names are valid for send --server only; compose, measure and
// send --exact refuse them (Parse) rather than count a prompt by another
// server's rules without a source saying the two agree.
const (
	// LlamaCpp is llama.cpp's llama-server.
	LlamaCpp = "llamacpp"
	// TRTLLM is TensorRT-LLM's trtllm-serve.
	TRTLLM = "trtllm"
	// Dynamo is NVIDIA Dynamo's OpenAI frontend.
	Dynamo = "dynamo"
	// OpenAI is a hosted OpenAI-compatible API: no parameter asks it for
	// a fixed output length.
	OpenAI = "openai"
)

var outputOnly = []string{LlamaCpp, TRTLLM, Dynamo, OpenAI}

// OutputServers lists every send --server value: the profiles, then the
// output-length-only servers.
func OutputServers() []string { return append(Names(), outputOnly...) }

// ParseOutputServer checks a send --server value ("" is Default).
func ParseOutputServer(s string) (string, error) {
	if s == "" {
		return string(Default), nil
	}
	if slices.Contains(OutputServers(), s) {
		return s, nil
	}
	return "", fmt.Errorf("unknown server %q (want one of %s)", s, strings.Join(OutputServers(), ", "))
}

// OutputMember is one body member that asks for the output length.
type OutputMember struct {
	Key   string
	Value []byte // JSON
}

// ExactOutput is the body members that make a server of the given name
// generate exactly maxTokens tokens on endpoint ep (ignoring EOS, and with
// the minimum raised to the maximum where the server has one), and ok
// false for a server that cannot be told (OpenAI), that names a counting
// rule rather than a server (transformers, aiperf), and for every
// Responses request: vLLM's ResponsesRequest.to_sampling_params passes
// no ignore_eos or min_tokens (vllm/entrypoints/openai/responses/
// protocol.py, "TODO: add more parameters"; the members would be accepted
// and dropped with a warning), and no other server's Responses endpoint
// is known to read them.
//
// Chat completions and completions:
// The parameter names, from each server's OpenAI frontend:
//   - vLLM: ignore_eos, min_tokens (vllm/entrypoints/openai/protocol.py,
//     the sampling-parameter extras of ChatCompletionRequest and
//     CompletionRequest).
//   - SGLang: ignore_eos, min_tokens, passed to its sampling parameters as
//     ignore_eos and min_new_tokens
//     (python/sglang/srt/entrypoints/openai/serving_chat.py and
//     serving_completions.py, _build_sampling_params).
//   - TensorRT-LLM: ignore_eos, min_tokens
//     (tensorrt_llm/serve/openai_protocol.py, to_sampling_params; its
//     requests forbid unknown members, so nothing else may be sent).
//   - Dynamo: ignore_eos, min_tokens at the top level of the body
//     (lib/llm/src/protocols/openai/common_ext.rs, CommonExt; the same
//     members inside nvext take precedence, so a user's nvext wins).
//   - llama.cpp: n_predict (the output length; max_tokens is its OpenAI
//     alias) and ignore_eos (tools/server/README.md); it has no minimum.
func ExactOutput(server string, ep endpoint.Kind, maxTokens int) ([]OutputMember, bool) {
	if ep == endpoint.Responses {
		return nil, false
	}
	n := []byte(strconv.Itoa(maxTokens))
	yes := []byte("true")
	switch server {
	case string(VLLM), string(SGLang), TRTLLM, Dynamo:
		return []OutputMember{{"ignore_eos", yes}, {"min_tokens", n}}, true
	case LlamaCpp:
		return []OutputMember{{"n_predict", n}, {"ignore_eos", yes}}, true
	}
	return nil, false
}

// ExactOutputKeys are every member ExactOutput may write, for telling
// which of them a user set.
func ExactOutputKeys() []string { return []string{"ignore_eos", "min_tokens", "n_predict"} }

// outputOnlyRefusal is Parse's error for an output-length-only server.
func outputOnlyRefusal(s string) error {
	return fmt.Errorf("server %q is known to send only for its output-length parameters (send --server, --exact-osl): islkit has no rules for how it preprocesses a prompt, so it cannot count one as it does; count with one of %s", s, strings.Join(Names(), ", "))
}
