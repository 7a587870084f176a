package main

import (
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

type oslLine struct {
	MaxTokens    int                   `json:"max_tokens"`
	OutputLength *records.OutputLength `json:"output_length"`
	Payload      json.RawMessage       `json:"payload"`
	Result       struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	} `json:"result"`
}

func oslLines(t *testing.T, out string) ([]string, []oslLine) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	recs := make([]oslLine, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return lines, recs
}

// TestExactOSLLive: against a server whose model stops at random lengths,
// send's default --exact-osl makes every request's completion_tokens its
// max_tokens, for every server that can be told, each in its own
// parameters (the test server honours only that server's).
func TestExactOSLLive(t *testing.T) {
	in := composeLive(t)
	for _, server := range []string{"vllm", "sglang", "trtllm", "dynamo", "llamacpp"} {
		s := testserver.StartTest(t, testserver.Config{NoTokenize: true, RandomStop: true, Seed: 3, OutputServer: server})
		code, out, errs := runCLI("--url", s.URL(), "--server", server, "--concurrency", "4", in)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", server, code, errs)
		}
		lines, recs := oslLines(t, out)
		if len(recs) != 16 {
			t.Fatalf("%s: %d records", server, len(recs))
		}
		testutil.ValidateSchema(t, "request.schema.json", []byte(lines[0]))
		for _, r := range recs {
			if r.Result.Usage.CompletionTokens != r.MaxTokens || r.OutputLength == nil || r.OutputLength.Mode != records.OutputExact {
				t.Errorf("%s: completion_tokens %d, max_tokens %d, output_length %+v", server, r.Result.Usage.CompletionTokens, r.MaxTokens, r.OutputLength)
			}
		}
	}
}

// measureAll measures send's records as measure does, with the embedded
// model, into a summary.
func measureAll(t *testing.T, out string) ([]records.ISL, report.Report) {
	t.Helper()
	m, err := model.Load(model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := measure.New(measure.Options{Tokenizer: m.Tokenizer, Template: m.Template, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	sum := report.NewAccumulator()
	var isls []records.ISL
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		res, err := ms.Record([]byte(l))
		if err != nil {
			t.Fatalf("measure: %v", err)
		}
		for _, r := range res.Requests {
			sum.AddRequest(r)
			isls = append(isls, r.ISL)
		}
	}
	return isls, sum.Report()
}

// TestOSLMissesAttributed: with --exact-osl=false the model stops when it
// likes, and measure attributes every request's outcome to the cause the
// test server's own record gives (stopped at its EOS: stopped_early; ran
// to max_tokens: exact); with a server that ignores min_tokens, the
// summary flags the run.
func TestOSLMissesAttributed(t *testing.T) {
	in := composeLive(t)
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, RandomStop: true, Seed: 3})
	code, out, errs := runCLI("--url", s.URL(), "--exact-osl=false", "--concurrency", "4", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := oslLines(t, out)
	isls, rep := measureAll(t, out)
	misses := 0
	for i, r := range recs {
		stop, ok := s.StopOf(r.Payload)
		want := map[string]string{testserver.StopEOS: records.OSLStoppedEarly, testserver.StopMaxTokens: records.OSLExact}[stop.Why]
		o := isls[i].OSL
		if !ok || o == nil || o.Cause != want || o.Received != stop.Tokens || o.Asked != records.OutputBestEffort {
			t.Errorf("request %d: server stopped %+v (found %v); measure says %+v", i, stop, ok, o)
		}
		if want != records.OSLExact {
			misses++
		}
	}
	if misses == 0 || rep.OSL == nil || rep.OSL.Causes[records.OSLStoppedEarly] != uint64(misses) {
		t.Errorf("%d misses; summary %+v", misses, rep.OSL)
	}
	if strings.Contains(rep.OSL.Warning, "ignored") {
		t.Errorf("best-effort requests flagged as ignored: %q", rep.OSL.Warning)
	}

	bad := testserver.StartTest(t, testserver.Config{NoTokenize: true, RandomStop: true, Seed: 3, FaultRate: 1, Faults: []string{testserver.FaultIgnoreMinTokens}})
	code, out, errs = runCLI("--url", bad.URL(), "--concurrency", "4", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, rep = measureAll(t, out)
	if rep.OSL == nil || !strings.Contains(rep.OSL.Warning, "the server ignored those parameters") {
		t.Errorf("a server ignoring min_tokens not flagged: %+v", rep.OSL)
	}
}

// TestExactOSLDryRunAndNotes: the dry run shows the parameters (on by
// default); a server that cannot be told is said once on stderr; a
// user's --extra-body value is kept and said.
func TestExactOSLDryRunAndNotes(t *testing.T) {
	in := writeInput(t, convLine, strings.Replace(convLine, `"trace_a"`, `"trace_b"`, 1))
	code, out, errs := runCLI("--dry-run", in)
	if code != 0 || strings.Count(out, `"ignore_eos":true,"min_tokens":3`) != 2 || errs != "" {
		t.Errorf("default dry run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI("--dry-run", "--server", "openai", in)
	if code != 0 || strings.Contains(out, "ignore_eos") || strings.Count(errs, "cannot be asked") != 1 || !strings.Contains(out, `"mode":"best_effort"`) {
		t.Errorf("openai: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI("--dry-run", "--extra-body", `{"min_tokens":1}`, in)
	if code != 0 || strings.Count(out, `"max_tokens":3,"ignore_eos":true,"stream"`) != 2 || strings.Count(out, `"min_tokens":`) != 2 || !strings.Contains(errs, "kept as given") {
		t.Errorf("user min_tokens: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI("--dry-run", "--exact", "--server", "llamacpp", in); code != 2 {
		t.Errorf("--exact --server llamacpp: exit %d, %s", code, errs)
	}
}

// TestOSLReasoningLive: a reasoning model's server counts its reasoning
// inside completion_tokens; send records it and measure reports it per
// request and in the summary, the request still exact by the count.
func TestOSLReasoningLive(t *testing.T) {
	in := composeLive(t)
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, Reasoning: 4})
	code, out, errs := runCLI("--url", s.URL(), "--concurrency", "4", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	isls, rep := measureAll(t, out)
	for i, isl := range isls {
		if o := isl.OSL; o == nil || o.Reasoning == nil || *o.Reasoning != 4 || o.Cause != records.OSLExact {
			t.Errorf("request %d: %+v", i, o)
		}
	}
	if rep.OSL == nil || rep.OSL.ReasoningInCount != 16 || rep.OSL.ReasoningTokens != 64 {
		t.Errorf("summary %+v", rep.OSL)
	}
}
