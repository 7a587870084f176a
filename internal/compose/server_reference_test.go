package compose

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/workload"
)

// serverRefRow is one line of testdata/server-reference.jsonl.gz, written
// by scripts/check-compose-server-reference.sh --update: a dry-run request
// of `probe | compose --server sglang --dataset openai_tools.jsonl | send
// --dry-run`, counted by the independent reference of SGLang's rules
// (testdata/conformance/oracle/sglang_ref.py: §5 of the reference
// document in Python, Python Jinja2, the Python tokenizers).
type serverRefRow struct {
	Model, Target string
	ISL           int
	Conv, Turn    int
	PayloadSHA256 string `json:"payload_sha256"`
	RefTokens     *int   `json:"ref_tokens"`
	Error         string `json:"error"`
}

type serverRefCase struct {
	model, target string
	isl           int
}

// composeToolsDataset composes testdata/openai_tools.jsonl (OpenAI
// messages with text parts, null content, tool calls and results, tools,
// names, reasoning and final assistant turns) for server profile server,
// as the reference script does, and returns the conversations with the
// dialogs compose skipped.
func composeToolsDataset(t *testing.T, model string, target cachebust.Target, isl int, server serverprofile.Profile) (*Model, []records.Conversation, []workload.Skipped) {
	t.Helper()
	p, m := realProbe(t, model, target)
	f, err := os.Open(filepath.Join("testdata", "openai_tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dialogs, skipped, _, err := workload.ReadDataset(f, "openai_tools.jsonl", "")
	if err != nil || len(skipped) != 0 || len(dialogs) != 4 {
		t.Fatalf("dataset: %d dialogs, skipped %v, %v", len(dialogs), skipped, err)
	}
	d, err := NewDataset(p, m, DatasetOptions{OSL: 128, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Model: "ref", Workers: 2, ISL: isl, Server: server})
	if err != nil {
		t.Fatal(err)
	}
	convs := runDataset(t, d, dialogs)
	for _, c := range convs {
		if c.Server != string(server) {
			t.Fatalf("conversation %s records server %q, want %s", c.ID, c.Server, server)
		}
	}
	return m, convs, d.Skipped()
}

// TestServerDatasetReference recomposes every case of the SGLang reference
// check and requires the very payloads the reference counted (same hash,
// the same conversations kept: the one SGLang refuses is skipped), and
// compose's count and measure --server sglang's of each to equal the
// reference's, which must be the turn's target_isl (or, for a turn marked
// unreachable, exceed it): the done-when of issue #21.
func TestServerDatasetReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 42 cases on 7 real models")
	}
	cases := map[serverRefCase][]serverRefRow{}
	var order []serverRefCase
	for _, r := range testutil.ReadJSONL[serverRefRow](t, filepath.Join("testdata", "server-reference.jsonl.gz")) {
		k := serverRefCase{r.Model, r.Target, r.ISL}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if want := len(testutil.RefModels(t)) * 3 * 2; len(order) != want {
		t.Fatalf("%d cases in testdata, want %d (every model × 3 targets × 2 lengths)", len(order), want)
	}
	b, err := send.NewBuilder(send.PayloadOptions{Stream: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range order {
		t.Run(fmt.Sprintf("%s/%s/%d", k.model, k.target, k.isl), func(t *testing.T) {
			target, _ := cachebust.ParseTarget(k.target)
			m, convs, skipped := composeToolsDataset(t, k.model, target, k.isl, serverprofile.SGLang)
			if !refusedByName(skipped, 4, "sglang would refuse this request: tool-call arguments must be valid JSON") {
				t.Errorf("skipped %v: want line 4 refused for its tool-call arguments", skipped)
			}
			byIndex := map[int]*records.Conversation{}
			for i := range convs {
				byIndex[convs[i].Index] = &convs[i]
			}
			rows := cases[k]
			seen := map[int]bool{}
			for _, r := range rows {
				if r.Error != "" || r.RefTokens == nil {
					t.Fatalf("conv %d turn %d: the reference could not count the request: %s", r.Conv, r.Turn, r.Error)
				}
				conv := byIndex[r.Conv]
				if conv == nil {
					t.Fatalf("conv %d: the reference counted it, compose skipped it", r.Conv)
				}
				seen[r.Conv] = true
				built, err := b.Build(conv, r.Turn, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if h := payloadHash(t, built.Body); h != r.PayloadSHA256 {
					t.Fatalf("conv %d turn %d: payload differs from the one the reference counted (regenerate with scripts/check-compose-server-reference.sh --update)\n%.400s", r.Conv, r.Turn, built.Body)
				}
				turn := conv.Turns[r.Turn]
				ref := *r.RefTokens
				if got := measuredAs(t, m, built.Body, serverprofile.SGLang); got != ref {
					t.Errorf("conv %d turn %d: measure --server sglang counts %d, reference %d", r.Conv, r.Turn, got, ref)
				}
				if turn.WireISL == nil || *turn.WireISL != ref {
					t.Errorf("conv %d turn %d: compose counts %v, reference %d", r.Conv, r.Turn, turn.WireISL, ref)
				}
				if turn.Unreachable == nil && ref != turn.TargetISL {
					t.Errorf("conv %d turn %d: reference %d, target %d", r.Conv, r.Turn, ref, turn.TargetISL)
				}
				if turn.Unreachable != nil && (turn.Unreachable.MinISL != ref || ref <= turn.TargetISL) {
					t.Errorf("conv %d turn %d: unreachable %+v but reference %d", r.Conv, r.Turn, turn.Unreachable, ref)
				}
			}
			if len(seen) != len(convs) {
				t.Errorf("compose kept %d conversations, the reference counted %d", len(convs), len(seen))
			}
		})
	}
}

// TestServerDatasetProfiles: for every profile and reference model, the
// dataset composed with --server P (texts kept and resized to --isl) gives
// requests that measure --server P counts at exactly their target_isl, the
// count compose recorded; a dialog is left out only when that server
// refuses it (its rules or its template), saying so.
func TestServerDatasetProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("composes the dataset for 4 profiles on 7 real models")
	}
	b, err := send.NewBuilder(send.PayloadOptions{Stream: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range testutil.RefModels(t) {
		for _, server := range []serverprofile.Profile{serverprofile.VLLM, serverprofile.SGLang, serverprofile.Transformers, serverprofile.AIPerf} {
			for _, isl := range []int{0, 200} {
				t.Run(fmt.Sprintf("%s/%s/%d", model, server, isl), func(t *testing.T) {
					m, convs, skipped := composeToolsDataset(t, model, cachebust.FirstTurnPrefix, isl, server)
					for _, s := range skipped {
						if !strings.Contains(s.Reason, "refuses the request") && !strings.Contains(s.Reason, "would refuse this request") {
							t.Errorf("line %d skipped for another reason than a refusal: %s", s.Line, s.Reason)
						}
					}
					if len(convs)+len(skipped) != 4 {
						t.Fatalf("%d conversations and %d skipped of 4 dialogs", len(convs), len(skipped))
					}
					for ci := range convs {
						c := &convs[ci]
						for k, turn := range c.Turns {
							built, err := b.Build(c, k, 0, nil)
							if err != nil {
								t.Fatal(err)
							}
							got := measuredAs(t, m, built.Body, server)
							if turn.WireISL == nil || *turn.WireISL != got {
								t.Errorf("%s turn %d: compose counts %v, measure --server %s %d", c.ID, k, turn.WireISL, server, got)
							}
							if turn.Unreachable == nil && got != turn.TargetISL {
								t.Errorf("%s turn %d: measure --server %s counts %d, target %d", c.ID, k, server, got, turn.TargetISL)
							}
						}
					}
				})
			}
		}
	}
}

// refusedByName reports whether line is among skipped with a reason
// containing why.
func refusedByName(skipped []workload.Skipped, line int, why string) bool {
	for _, s := range skipped {
		if s.Line == line && strings.Contains(s.Reason, why) {
			return true
		}
	}
	return false
}

// measuredAs is measure --server p's templated count of a dry-run payload.
func measuredAs(t *testing.T, m *Model, body []byte, p serverprofile.Profile) int {
	t.Helper()
	res, err := measure.New(measure.Options{Tokenizer: m.Tokenizer, Template: m.Template, ApplyChatTemplate: true,
		Now: pinned, Server: p}).Record(body)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ISL records.ISL `json:"isl"`
	}
	if err := json.Unmarshal(res.Lines[0], &out); err != nil {
		t.Fatal(err)
	}
	if out.ISL.Counted != "templated" || out.ISL.Templated == nil {
		t.Fatalf("measure counted %q (templated %v): %s", out.ISL.Counted, out.ISL.Templated, out.ISL.TemplateError)
	}
	return *out.ISL.Templated
}

// TestDatasetSentAsItIs: a dataset's messages go out with their shape:
// text parts stay parts (the last one the turn's text), names, reasoning,
// tool calls (arguments as given), tool results and the tools are
// replayed (their JSON compacted, keys in the dataset's order), and a final assistant message is the last turn's reply (its
// length max_tokens), not sent.
func TestDatasetSentAsItIs(t *testing.T) {
	_, convs, skipped := composeToolsDataset(t, "", cachebust.None, 0, serverprofile.VLLM)
	if len(convs) != 4 || len(skipped) != 0 {
		t.Fatalf("%d conversations, skipped %v", len(convs), skipped)
	}
	b, err := send.NewBuilder(send.PayloadOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := func(c *records.Conversation, turn int) string {
		built, err := b.Build(c, turn, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(built.Body)
	}
	for _, c := range []struct {
		conv, turn int
		want       []string
	}{
		{0, 0, []string{`{"content":[{"text":"I am going to Paris next week.","type":"text"},{"text":"What is the weather there today?","type":"text"}],"role":"user"}`,
			`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather of a city",`}},
		{0, 1, []string{`{"content":null,"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"celsius\"}"}}]}`,
			`{"content":"Sunny, 21 degrees, light wind from the west.","role":"tool","tool_call_id":"call_1"}`,
			`{"content":"It is sunny in Paris today, 21 degrees with a light westerly wind.","role":"assistant"},{"content":"And what should I pack for a week of walking around the city?","role":"user"}]`}},
		{1, 1, []string{`{"content":"Summarise the plot of Moby Dick in two sentences.","name":"reader","role":"user"}`,
			`"reasoning_content":"The user wants a very short summary; keep the two key beats.","role":"assistant"`,
			`{"content":[{"text":"Now the same for","type":"text"},{"text":"Bartleby,","type":"text"},{"text":"the Scrivener.","type":"text"}],"role":"user"}]`}},
		{2, 1, []string{`{"content":[{"text":"You convert currencies.","type":"text"},{"text":"Answer with numbers only.","type":"text"}],"role":"system"}`,
			`{"content":[{"text":"108.5","type":"text"},{"text":"USD","type":"text"}],"role":"tool","tool_call_id":"c1"}`}},
	} {
		got := body(&convs[c.conv], c.turn)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("conv %d turn %d: body lacks %s\n%s", c.conv, c.turn, w, got)
			}
		}
	}
	// The final assistant message is the reply of the last turn: its
	// length is max_tokens, and no request carries it.
	last := convs[1].Turns[1]
	if last.Assistant != "A Wall Street lawyer hires a copyist who gradually refuses every task. Bartleby ends up dying in prison, still preferring not to." || last.Text != "the Scrivener." {
		t.Errorf("conv 1 turn 1: text %q, assistant %q", last.Text, last.Assistant)
	}
}
