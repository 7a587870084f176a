package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// endpointRefRow is one line of testdata/endpoints-reference.jsonl.gz,
// written by scripts/check-compose-endpoints-reference.sh --update: a dry-run
// request of `probe --endpoint E | compose | send --dry-run`, counted by
// the reference of vLLM's completions and Responses prompt counts
// (testdata/conformance/oracle/endpoint_ref.py with count_ref.cjs: the
// Responses→messages conversion, Python Jinja2, the Rust tokenizers with
// special tokens).
type endpointRefRow struct {
	Model, Endpoint, Target string
	ISL, System             int
	Conv, Turn              int
	PayloadSHA256           string `json:"payload_sha256"`
	RefTokens               *int   `json:"ref_tokens"`
	Refused                 string `json:"refused"`
	Error                   string `json:"error"`
}

type endpointRefCase struct {
	model, endpoint, target string
	isl, system             int
}

// TestEndpointsDryRunReference recomposes every case of the endpoints
// reference check, builds its dry run, and requires the very payloads the
// reference counted (same hash) and compose's count of each, and
// measure --server vllm's, to equal the reference's, which must be the turn's target: exactly --isl for every
// first request without a system prompt (unless the template alone costs
// more: then it is marked unreachable at the reference's count), and each
// later Responses turn its target_isl.
func TestEndpointsDryRunReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 245 cases on 7 real models")
	}
	cases := map[endpointRefCase][]endpointRefRow{}
	var order []endpointRefCase
	for _, r := range testutil.ReadJSONL[endpointRefRow](t, filepath.Join("testdata", "endpoints-reference.jsonl.gz")) {
		k := endpointRefCase{r.Model, r.Endpoint, r.Target, r.ISL, r.System}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	models := testutil.RefModels(t)
	// Per model: completions 5 targets × 3 lengths, responses 5 × 4.
	if len(order) != len(models)*(5*3+5*4) {
		t.Fatalf("%d cases in testdata, want %d (%d models × 35)", len(order), len(models)*35, len(models))
	}
	type modelKey struct {
		name     string
		template bool
	}
	loaded := map[modelKey]*Model{}
	for _, k := range order {
		t.Run(fmt.Sprintf("%s/%s/%s/%d/%d", k.model, k.endpoint, k.target, k.isl, k.system), func(t *testing.T) {
			ep, _ := endpoint.Parse(k.endpoint)
			target, _ := cachebust.ParseTarget(k.target)
			src := testmodel.Source(t, k.model)
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: ep.Templated(), CacheBust: target, Now: pinned, Endpoint: ep})
			if err != nil {
				t.Fatal(err)
			}
			mk := modelKey{k.model, ep.Templated()}
			m := loaded[mk]
			if m == nil {
				if m, err = modelFor(p, src, "", ""); err != nil {
					t.Fatal(err)
				}
				loaded[mk] = m
			}
			turns := 2
			if !ep.MultiTurn() {
				turns = 1
			}
			c, err := New(p, m, "", Options{ISL: k.isl, OSL: 32, Conversations: 2, Turns: turns, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Model: "ref",
				SharedSystemPromptLength: k.system, Exact: true, Workers: 2, Endpoint: ep, ISLSet: true, OSLSet: true, TurnsSet: true})
			rows := cases[k]
			if rows[0].Refused != "" {
				if !cli.IsUsage(err) {
					t.Errorf("the reference run was refused (%s) but New gives %v", rows[0].Refused, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := send.NewBuilder(send.PayloadOptions{Stream: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			convs := map[int]*records.Conversation{}
			for _, r := range rows {
				if r.Error != "" || r.RefTokens == nil {
					t.Fatalf("conv %d turn %d: the reference could not count the request: %s", r.Conv, r.Turn, r.Error)
				}
				conv := convs[r.Conv]
				if conv == nil {
					if conv, err = c.Conversation(r.Conv); err != nil {
						t.Fatal(err)
					}
					convs[r.Conv] = conv
				}
				if conv.Endpoint != ep {
					t.Fatalf("conversation endpoint %q, want %s", conv.Endpoint, ep)
				}
				built, err := b.Build(conv, r.Turn, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if h := payloadHash(t, built.Body); h != r.PayloadSHA256 {
					t.Fatalf("conv %d turn %d: payload differs from the one the reference counted (regenerate with scripts/check-compose-endpoints-reference.sh --update)\n%.300s", r.Conv, r.Turn, built.Body)
				}
				turn := conv.Turns[r.Turn]
				ref := *r.RefTokens
				if got := measured(t, m, built.Body); got != ref {
					t.Errorf("conv %d turn %d: measure --server vllm counts %d, reference %d", r.Conv, r.Turn, got, ref)
				}
				if turn.WireISL == nil || *turn.WireISL != ref {
					t.Errorf("conv %d turn %d: compose counts %v, reference %d", r.Conv, r.Turn, turn.WireISL, ref)
				}
				// A target below what the template alone costs (gpt-oss's
				// Responses request at 64) is marked unreachable, its
				// minimum the reference's count.
				if turn.Unreachable != nil && (turn.Unreachable.MinISL != ref || ref <= turn.TargetISL) {
					t.Errorf("conv %d turn %d: unreachable %+v but reference %d", r.Conv, r.Turn, turn.Unreachable, ref)
				}
				if turn.Unreachable == nil && ref != turn.TargetISL {
					t.Errorf("conv %d turn %d: reference %d, target %d", r.Conv, r.Turn, ref, turn.TargetISL)
				}
				if r.Turn == 0 && k.system == 0 && turn.Unreachable == nil && ref != k.isl {
					t.Errorf("conv %d: first request counts %d by the reference, want --isl %d", r.Conv, ref, k.isl)
				}
			}
		})
	}
}

// measured is measure --server vllm's count of a dry-run payload (its
// isl.templated: for completions the prompt with the special tokens the
// server adds).
func measured(t *testing.T, m *Model, body []byte) int {
	t.Helper()
	return measuredAs(t, m, body, serverprofile.VLLM)
}

// payloadHash matches the script: SHA-256 of the payload re-serialised
// with sorted keys, compact, UTF-8 unescaped (Python's json.dumps with
// sort_keys, separators (",", ":") and ensure_ascii=False).
func payloadHash(t *testing.T, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}
