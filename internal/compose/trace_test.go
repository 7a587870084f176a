package compose

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

var traceModels = []string{"llama3", "llama3_1", "qwen3", "deepseek_v3", "gptoss", "mistral7b", "mistral7b-metaspace"}

// composeTraceFile composes a testdata trace for a reference model ("" is
// the embedded default) as scripts/check-trace-reference.sh does.
func composeTraceFile(t *testing.T, model string, target cachebust.Target, file string, block int) (*Tracer, []records.Conversation, error) {
	t.Helper()
	p, m := realProbe(t, model, target)
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, skipped, err := workload.ReadMooncake(f, "trace.jsonl", block)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("trace: %v %v", skipped, err)
	}
	tr, err := NewTracer(p, m, "", TraceOptions{BlockSize: block, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 2, Model: "m"})
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := tr.Run(context.Background(), w, rows); err != nil {
		return nil, nil, err
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var convs []records.Conversation
	for l := range strings.Lines(buf.String()) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return tr, convs, nil
}

// traceRef is one line of testdata/trace_reference.jsonl.gz, written by
// scripts/check-trace-reference.sh --update from the reference renderer and
// tokenizer: the request compose made for a trace row (its message hash)
// and the reference's token count and per-block token hashes.
type traceRef struct {
	Model, Target, Trace string
	Block, Line          int
	HashIDs              []int64  `json:"hash_ids"`
	FullBlocks           int      `json:"full_blocks"`
	InputLength          int      `json:"input_length"`
	Unreachable          bool     `json:"unreachable"`
	MessagesSHA256       string   `json:"messages_sha256"`
	RefTokens            int      `json:"ref_tokens"`
	BlockSHA256          []string `json:"block_sha256"`
	Error                string
}

// TestTraceReference recomposes every trace of the reference check and
// requires the very requests the reference encoded (same message hash),
// our token ids equal to the reference's block by block, and, on the
// reference's ids: every reachable request exactly input_length; requests
// sharing their first k hash ids identical over their first full blocks
// among those k; requests whose ids differ at a block both hold in full
// different there; full_blocks len(hash_ids) − 1, or one less only when
// the last block leaves at most 32 tokens for the template's tail.
func TestTraceReference(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 28 traces on 7 real models")
	}
	type key struct{ model, target, trace string }
	cases := map[key][]traceRef{}
	var order []key
	for _, r := range testutil.ReadJSONL[traceRef](t, filepath.Join("testdata", "trace_reference.jsonl.gz")) {
		k := key{r.Model, r.Target, r.Trace}
		if _, ok := cases[k]; !ok {
			order = append(order, k)
		}
		cases[k] = append(cases[k], r)
	}
	if len(order) != len(traceModels)*2*2 {
		t.Fatalf("%d cases in testdata, want %d (models × 2 targets × 2 traces)", len(order), len(traceModels)*4)
	}
	for _, k := range order {
		t.Run(k.model+"/"+k.target+"/"+k.trace, func(t *testing.T) {
			rows := cases[k]
			target, _ := cachebust.ParseTarget(k.target)
			tr, convs, err := composeTraceFile(t, k.model, target, k.trace, rows[0].Block)
			if err != nil {
				t.Fatal(err)
			}
			if len(convs) != len(rows) {
				t.Fatalf("%d requests, the reference has %d", len(convs), len(rows))
			}
			for i, r := range rows {
				c := &convs[i]
				if r.Error != "" {
					t.Errorf("line %d: the reference could not render the request: %s", r.Line, r.Error)
					continue
				}
				req, err := wire.Build(c, 0, wire.Marker(c, 0), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := messagesSHA256(req.Messages); got != r.MessagesSHA256 || c.Trace.Line != r.Line {
					t.Errorf("line %d: compose made another request than the reference encoded (messages %s, reference %s)", r.Line, got, r.MessagesSHA256)
					continue
				}
				ids, err := tr.wireIDs(c, wire.Marker(c, 0))
				if err != nil {
					t.Fatal(err)
				}
				if got := blockSums(ids, r.Block); len(ids) != r.RefTokens || !slices.Equal(got, r.BlockSHA256) {
					t.Errorf("line %d: our tokens (%d) differ from the reference's (%d) in blocks %v vs %v", r.Line, len(ids), r.RefTokens, got, r.BlockSHA256)
				}
				// The bare count, read off the wire encoding where the
				// tokenizer proves it (Tracer.wireAndBare), is the text's
				// own count (Count is Rust's: tokenizer.TestGoldenTokens).
				if want := tr.model.Tokenizer.Count(c.Turns[0].Text); c.Turns[0].BareTokens != want {
					t.Errorf("line %d: bare_tokens %d, the text counts %d", r.Line, c.Turns[0].BareTokens, want)
				}
				checkTraceRow(t, r)
			}
			for i, a := range rows {
				for _, b := range rows[i+1:] {
					checkTracePair(t, a, b)
				}
			}
		})
	}
}

func checkTraceRow(t *testing.T, r traceRef) {
	t.Helper()
	n := len(r.HashIDs)
	switch {
	case r.Unreachable:
		if r.RefTokens <= r.InputLength {
			t.Errorf("line %d: marked unreachable, but the reference counts %d for input_length %d", r.Line, r.RefTokens, r.InputLength)
		}
	case r.RefTokens != r.InputLength:
		t.Errorf("line %d: the reference counts %d, input_length is %d", r.Line, r.RefTokens, r.InputLength)
	case r.FullBlocks != n-1 && !(r.FullBlocks == n-2 && r.InputLength-(n-1)*r.Block <= 32):
		t.Errorf("line %d: %d full blocks for %d hash ids and input_length %d", r.Line, r.FullBlocks, n, r.InputLength)
	}
}

func checkTracePair(t *testing.T, a, b traceRef) {
	t.Helper()
	if a.Unreachable || b.Unreachable {
		return
	}
	k := 0
	for k < min(len(a.HashIDs), len(b.HashIDs)) && a.HashIDs[k] == b.HashIDs[k] {
		k++
	}
	f := min(k, a.FullBlocks, b.FullBlocks)
	if !slices.Equal(a.BlockSHA256[:f], b.BlockSHA256[:f]) {
		t.Errorf("lines %d and %d share %d hash ids but their reference tokens differ within the first %d blocks", a.Line, b.Line, k, f)
	}
	if k < min(a.FullBlocks, b.FullBlocks) && a.BlockSHA256[k] == b.BlockSHA256[k] {
		t.Errorf("lines %d and %d differ at hash id %d but block %d has the same reference tokens", a.Line, b.Line, k, k)
	}
}

// blockSums is the reference script's per-block hash: the first 16 hex
// digits of SHA-256 over the block's ids joined by ",".
func blockSums(ids []int, block int) []string {
	var out []string
	for i := 0; i < len(ids); i += block {
		parts := make([]string, 0, block)
		for _, id := range ids[i:min(i+block, len(ids))] {
			parts = append(parts, strconv.Itoa(id))
		}
		s := sha256.Sum256([]byte(strings.Join(parts, ",")))
		out = append(out, hex.EncodeToString(s[:8]))
	}
	return out
}

func messagesSHA256(msgs []request.Message) string {
	var sb strings.Builder
	for _, m := range msgs {
		sb.WriteString(m.Role + "\x00" + m.Content + "\x00")
	}
	s := sha256.Sum256([]byte(sb.String()))
	return hex.EncodeToString(s[:])
}

// TestTraceDefaultModel composes the trace on the embedded model and checks
// it with our own tokenizer (the reference test covers all models): every
// request exact, shared chains identical block by block.
func TestTraceDefaultModel(t *testing.T) {
	tr, convs, err := composeTraceFile(t, "", cachebust.FirstTurnSuffix, "trace.jsonl", 128)
	if err != nil {
		t.Fatal(err)
	}
	var rows []traceRef
	for _, c := range convs {
		ids, err := tr.wireIDs(&c, wire.Marker(&c, 0))
		if err != nil {
			t.Fatal(err)
		}
		tu := c.Turns[0]
		if *tu.WireISL != len(ids) {
			t.Errorf("line %d: wire_isl %d, the request counts %d", c.Trace.Line, *tu.WireISL, len(ids))
		}
		if want := tr.model.Tokenizer.Count(tu.Text); tu.BareTokens != want {
			t.Errorf("line %d: bare_tokens %d, the text counts %d", c.Trace.Line, tu.BareTokens, want)
		}
		rows = append(rows, traceRef{Line: c.Trace.Line, Block: 128, HashIDs: c.Trace.HashIDs, FullBlocks: c.Trace.FullBlocks,
			InputLength: tu.TargetISL, Unreachable: tu.Unreachable != nil, RefTokens: len(ids), BlockSHA256: blockSums(ids, 128)})
		checkTraceRow(t, rows[len(rows)-1])
	}
	if len(rows) != 13 || !rows[8].Unreachable || rows[5].FullBlocks != 1 {
		t.Errorf("want 13 rows, line 9 (10 tokens) unreachable, line 6 (one token in its last block) 1 full block: %+v", rows)
	}
	for i, a := range rows {
		for _, b := range rows[i+1:] {
			checkTracePair(t, a, b)
		}
	}
}

func TestTraceRefusesPrefixTargets(t *testing.T) {
	for _, target := range []cachebust.Target{cachebust.FirstTurnPrefix, cachebust.SystemPrefix} {
		_, _, err := composeTraceFile(t, "", target, "trace.jsonl", 128)
		if !cli.IsUsage(err) || !strings.Contains(err.Error(), "before the blocks the trace says are shared") {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// TestTraceManyRows composes 400 random rows (lengths uniform around 800,
// half sharing a random number of leading blocks of 100 tokens with an
// earlier row) on every model, with and without a suffix marker, and
// encodes every request: its length is its wire_isl (the target), its
// text counts its bare_tokens, and shared blocks tokenize as the first row
// that carried them.
func TestTraceManyRows(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 5 600 requests on 7 real models")
	}
	rows := traceRows(400, 800, 100)
	for _, model := range traceModels {
		for _, target := range []cachebust.Target{cachebust.None, cachebust.FirstTurnSuffix} {
			p, m := realProbe(t, model, target)
			tr, err := NewTracer(p, m, "", TraceOptions{BlockSize: 100, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w := jsonl.NewWriter(&buf)
			if err := tr.Run(context.Background(), w, rows); err != nil {
				t.Errorf("%s %s: %v", model, target, err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			checkTraceCounts(t, tr, buf.String())
		}
	}
}

// TestTraceCountsFromParts: compose --trace writes the same bytes whether
// it takes a request's counts from its parts where the tokenizer proves
// the seams between them (Tracer.countFromParts) or encodes every request
// (the way before it), on every model: proofs on the byte-level ones, none
// on DeepSeek-V3 (digits split first) and the SentencePiece ones, which
// then encode. Every request's wire_isl is its encoding's length and its
// bare_tokens its text's count, and requests sharing a block share its
// tokens; named cache blocks are those of the request's encoding.
func TestTraceCountsFromParts(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 40
	}
	rows := traceRows(n, 700, 100)
	for k, model := range traceModels {
		// Cache blocks named on every other model: their ids are then
		// assembled from the parts too.
		cacheBlock := 16 * (1 - k%2)
		t.Run(model, func(t *testing.T) {
			p, m := realProbe(t, model, cachebust.FirstTurnSuffix)
			var out [2]bytes.Buffer
			var proved int64
			for i, encodeAll := range []bool{false, true} {
				tr, err := NewTracer(p, m, "", TraceOptions{BlockSize: 100, Seed: 3, BenchmarkID: testutil.SeedBenchmarkID(3), Workers: 2, CacheBlockSize: cacheBlock})
				if err != nil {
					t.Fatal(err)
				}
				tr.encodeAll = encodeAll
				w := jsonl.NewWriter(&out[i])
				if err := tr.Run(context.Background(), w, rows); err != nil {
					t.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if !encodeAll {
					proved = tr.fromParts.Load()
					checkTraceCounts(t, tr, out[i].String())
				}
			}
			if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
				t.Fatalf("the output differs from encoding every request")
			}
			t.Logf("%d of %d requests counted from their parts", proved, n)
			switch model {
			case "deepseek_v3", "mistral7b", "mistral7b-metaspace":
				if proved != 0 {
					t.Errorf("%d requests counted from their parts, want none (no seam is provable)", proved)
				}
			default:
				if proved < int64(n)/2 {
					t.Errorf("only %d of %d requests counted from their parts", proved, n)
				}
			}
		})
	}
}

// TestTraceCountsFromPartsUnproved: where no seam can be proved (every
// block ends in a Greek letter, not printable ASCII), requests with full
// blocks are encoded, and the output is still the same.
func TestTraceCountsFromPartsUnproved(t *testing.T) {
	words := strings.Fields("λόγος κόσμος ψυχή ἀρετή δίκη φύσις ἀλήθεια σοφία πόλις νόμος χρόνος θάλασσα")
	var corpus strings.Builder
	for i := range 3000 {
		corpus.WriteString(words[(i*7+i/5)%len(words)])
		corpus.WriteString(" ")
	}
	rows := traceRows(30, 700, 100)
	p, m := realProbe(t, "qwen3", cachebust.FirstTurnSuffix)
	var out [2]bytes.Buffer
	for i, encodeAll := range []bool{false, true} {
		tr, err := NewTracer(p, m, corpus.String(), TraceOptions{BlockSize: 100, Seed: 3, BenchmarkID: testutil.SeedBenchmarkID(3), Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		tr.encodeAll = encodeAll
		w := jsonl.NewWriter(&out[i])
		if err := tr.Run(context.Background(), w, rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := tr.fromParts.Load(); n != 0 {
			t.Errorf("%d requests counted from their parts, want none", n)
		}
		checkTraceCounts(t, tr, out[i].String())
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
		t.Fatalf("the output differs from encoding every request")
	}
}

// checkTraceCounts encodes every request of out.
func checkTraceCounts(t *testing.T, tr *Tracer, out string) {
	t.Helper()
	blocks := map[int64]string{} // by the last hash id of a full block's chain (traceRows' ids are unique per chain)
	for l := range strings.Lines(out) {
		var c records.Conversation
		if err := records.Decode(jsonl.Line{File: "out", Data: []byte(l)}, records.KindConversation, &c); err != nil {
			t.Fatal(err)
		}
		ids, err := tr.wireIDs(&c, wire.Marker(&c, 0))
		if err != nil {
			t.Fatal(err)
		}
		tu := c.Turns[0]
		if *tu.WireISL != len(ids) || (tu.Unreachable == nil && len(ids) != tu.TargetISL) {
			t.Errorf("line %d: wire_isl %d, target %d, the request encodes to %d", c.Trace.Line, *tu.WireISL, tu.TargetISL, len(ids))
		}
		if c.CacheBlockSize > 0 && tu.CacheBlocks != prefixcache.Chain(ids, c.CacheBlockSize) {
			t.Errorf("line %d: cache blocks differ from the encoding's", c.Trace.Line)
		}
		if want := tr.model.Tokenizer.Count(tu.Text); tu.BareTokens != want {
			t.Errorf("line %d: bare_tokens %d, the text counts %d", c.Trace.Line, tu.BareTokens, want)
		}
		for j, sum := range blockSums(ids, 100)[:c.Trace.FullBlocks] {
			id := c.Trace.HashIDs[j]
			if prev, ok := blocks[id]; ok && prev != sum {
				t.Errorf("line %d: block %d's tokens differ from an earlier request's", c.Trace.Line, j)
			}
			blocks[id] = sum
		}
	}
}
