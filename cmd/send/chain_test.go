package main

import (
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

type chainLine struct {
	Turn    int            `json:"turn"`
	Target  int            `json:"target_isl"`
	Chained *records.Chain `json:"chained"`
	Payload struct {
		Input    []json.RawMessage `json:"input"`
		Previous string            `json:"previous_response_id"`
		Store    bool              `json:"store"`
	} `json:"payload"`
	Result *struct {
		ResponseID string `json:"response_id"`
		Usage      struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	} `json:"result"`
}

func chainComposed(t *testing.T) string {
	return composeLiveFor(t, endpoint.Responses, cachebust.FirstTurnSuffix,
		compose.Options{ISL: 60, OSL: 24, Conversations: 3, Turns: 3, SharedSystemPromptLength: 20, Seed: 2})
}

// TestResponsesChainLive: with --responses-chain every turn after the
// first sends only its new input and the previous answer's id, each
// stored; the test server reconstructs the conversation as vLLM does, and
// with --exact the ISL it counts is every turn's target_isl (the server's
// count, not the payload's new turn alone). measure counts the
// reconstruction, equal to the server's count, and says which turns were
// chained.
func TestResponsesChainLive(t *testing.T) {
	in := chainComposed(t)
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	s := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 4, Now: now})
	code, out, errs := runCLI("--responses-chain", "--exact", "--exact-osl=false", "--url", s.URL(), "--concurrency", "2", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d records", len(lines))
	}
	chained := 0
	for _, l := range lines {
		testutil.ValidateSchema(t, "request.schema.json", []byte(l))
		var r chainLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if !r.Payload.Store || r.Result == nil || r.Result.ResponseID == "" {
			t.Errorf("turn %d: store %v, result %+v", r.Turn, r.Payload.Store, r.Result)
			continue
		}
		if r.Turn > 0 {
			if r.Chained == nil || r.Payload.Previous == "" || r.Chained.PreviousResponseID != r.Payload.Previous || len(r.Payload.Input) != 1 {
				t.Errorf("turn %d not chained: %s", r.Turn, l)
			}
			chained++
		}
		if r.Result.Usage.PromptTokens != r.Target {
			t.Errorf("turn %d: the server prefills %d, target %d", r.Turn, r.Result.Usage.PromptTokens, r.Target)
		}
	}
	if chained != 6 {
		t.Errorf("%d chained turns, want 6", chained)
	}
	isls, rep := measureChat(t, out, now)
	for i, isl := range isls {
		if isl.Templated == nil || isl.Server == nil || *isl.Templated != *isl.Server || isl.Chained != (*isl.TurnIndex > 0) {
			t.Errorf("request %d: measure %v, server %v, chained %v", i, isl.Templated, isl.Server, isl.Chained)
		}
	}
	if rep.Chained != 6 {
		t.Errorf("summary chained %d", rep.Chained)
	}
}

// TestResponsesChainDryRun: a chained dry run names each previous answer
// dry-run:CONV:TURN, and measure's count of every turn (the conversation
// the server would reconstruct) is its target_isl, as compose sized it.
func TestResponsesChainDryRun(t *testing.T) {
	in := chainComposed(t)
	code, out, errs := runCLI("--dry-run", "--responses-chain", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	isls, _ := measureChat(t, out, time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC))
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r chainLine
		json.Unmarshal([]byte(l), &r)
		if r.Turn > 0 && (r.Chained == nil || !strings.HasPrefix(r.Payload.Previous, "dry-run:")) {
			t.Errorf("turn %d: %s", r.Turn, l)
		}
		if isls[i].Templated == nil || *isls[i].Templated != r.Target {
			t.Errorf("request %d turn %d: measure counts %v, target %d", i, r.Turn, isls[i].Templated, r.Target)
		}
	}
	if code, _, errs := runCLI("--dry-run", "--responses-chain", writeInput(t, convLine)); code != 2 || !strings.Contains(errs, "--endpoint chat") {
		t.Errorf("chat conversations: exit %d, %s", code, errs)
	}
}

// measureChat measures as `measure --apply-chat-template` with the
// embedded model.
func measureChat(t *testing.T, out string, now time.Time) ([]records.ISL, report.Report) {
	t.Helper()
	m, err := model.Load(model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := measure.New(measure.Options{Tokenizer: m.Tokenizer, Template: m.Template, Now: now, ApplyChatTemplate: true})
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
