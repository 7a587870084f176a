package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/workload"
)

// BenchmarkCompose1000 measures the performance goal: composing 1000
// exact conversations at ISL 1000 (embedded Qwen3, chat template applied,
// first_turn_prefix marker, corpus tokenization included) against
// tokenizing the texts of that output once on one goroutine, in the same
// run. compose/tokenize is the ratio the goal bounds at 3.
func BenchmarkCompose1000(b *testing.B) {
	p, err := probe.Run(probe.Options{ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnPrefix, Now: pinned})
	if err != nil {
		b.Fatal(err)
	}
	text, err := corpus.Default()
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var newT, composeT, tokenizeT time.Duration
			for b.Loop() {
				// A fresh model each time, so the corpus cache does not hide
				// the corpus tokenization.
				m, err := LoadModel(p, "", "", "")
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC() // the model's garbage is not compose's
				start := time.Now()
				c, err := New(p, m, text, Options{ISL: 1000, OSL: 128, Conversations: 1000, Turns: 1, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Exact: true, Workers: workers, ISLSet: true})
				if err != nil {
					b.Fatal(err)
				}
				newT += time.Since(start)
				var buf bytes.Buffer
				w := jsonl.NewWriter(&buf)
				if err := c.Run(context.Background(), w); err != nil {
					b.Fatal(err)
				}
				w.Flush()
				composeT += time.Since(start)

				var texts []string
				for line := range bytes.Lines(buf.Bytes()) {
					var conv records.Conversation
					if err := json.Unmarshal(line, &conv); err != nil {
						b.Fatal(err)
					}
					for _, t := range conv.Turns {
						texts = append(texts, t.Text, t.Assistant)
					}
				}
				// A fresh tokenizer, so compose's warm word cache does not
				// flatter the baseline.
				fresh, err := LoadModel(p, "", "", "")
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				start = time.Now()
				n := 0
				for _, s := range texts {
					n += fresh.Tokenizer.Count(s)
				}
				tokenizeT += time.Since(start)
				if n < 1000*1000 {
					b.Fatalf("output has %d tokens, want over a million", n)
				}
			}
			b.ReportMetric(composeT.Seconds()/float64(b.N), "compose-s/op")
			b.ReportMetric(newT.Seconds()/float64(b.N), "setup-s/op") // corpus tokenization and decoding, included in compose-s
			b.ReportMetric(tokenizeT.Seconds()/float64(b.N), "tokenize-s/op")
			b.ReportMetric(float64(composeT)/float64(tokenizeT), "compose/tokenize")
		})
	}
}

// traceRows is a synthetic Mooncake trace: n rows of input length uniform
// in [mean/2, 3·mean/2], half of them sharing a random number of leading
// blocks with an earlier row (as multi-turn and shared-system-prompt
// traffic does).
func traceRows(n, mean, block int) []workload.TraceRow {
	rng := rand.New(rand.NewPCG(7, 7))
	rows := make([]workload.TraceRow, n)
	next := int64(0)
	for i := range rows {
		l := mean/2 + rng.IntN(mean+1)
		blocks := (l + block - 1) / block
		ids := make([]int64, blocks)
		shared := 0
		if i > 0 && rng.IntN(2) == 0 {
			prev := rows[rng.IntN(i)].HashIDs
			shared = rng.IntN(min(len(prev), blocks))
			copy(ids, prev[:shared])
		}
		for k := shared; k < blocks; k++ {
			ids[k] = next
			next++
		}
		ts := float64(i * 10)
		rows[i] = workload.TraceRow{Line: i + 1, Timestamp: &ts, InputLength: l, OutputLength: 100, HashIDs: ids}
	}
	return rows
}

// traceBenchRows is BenchmarkComposeTrace's row count: fewer for a
// quicker run (under valgrind --tool=callgrind, whose instruction counts
// of the tracer's and of countTexts' work are steady on a busy machine).
var traceBenchRows = flag.Int("trace-rows", 10000, "rows BenchmarkComposeTrace composes")

// countTexts is the baseline's tokenization, a function of its own so that
// a profile names it.
//
//go:noinline
func countTexts(tok *tokenizer.Tokenizer, texts []string) int {
	n := 0
	for _, s := range texts {
		n += tok.Count(s)
	}
	return n
}

// BenchmarkComposeTrace measures compose --trace on 10 000 rows at mean ISL
// 4096 (block 512, embedded Qwen3, first_turn_suffix marker, corpus
// tokenization included) against tokenizing the texts of that output once
// on one goroutine, in the same run: compose/tokenize is the ratio the goal
// bounds (issue #21: 1.5; see docs/benchmarks.md) on
// the wall clock; cpu-compose/tokenize is the same in process CPU time,
// steadier on a shared machine.
func BenchmarkComposeTrace(b *testing.B) {
	p, err := probe.Run(probe.Options{ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnSuffix, Now: pinned})
	if err != nil {
		b.Fatal(err)
	}
	text, err := corpus.Default()
	if err != nil {
		b.Fatal(err)
	}
	rows := traceRows(*traceBenchRows, 4096, 512)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var composeT, tokenizeT, composeCPU, tokenizeCPU time.Duration
			for b.Loop() {
				m, err := LoadModel(p, "", "", "")
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				start, cpu := time.Now(), cpuTime()
				tr, err := NewTracer(p, m, text, TraceOptions{BlockSize: 512, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				w := jsonl.NewWriter(&buf)
				if err := tr.Run(context.Background(), w, rows); err != nil {
					b.Fatal(err)
				}
				w.Flush()
				composeT += time.Since(start)
				composeCPU += cpuTime() - cpu

				var texts []string
				for line := range bytes.Lines(buf.Bytes()) {
					var conv records.Conversation
					if err := json.Unmarshal(line, &conv); err != nil {
						b.Fatal(err)
					}
					texts = append(texts, conv.Turns[0].Text)
				}
				buf = bytes.Buffer{}
				fresh, err := LoadModel(p, "", "", "")
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				start, cpu = time.Now(), cpuTime()
				n := countTexts(fresh.Tokenizer, texts)
				tokenizeT += time.Since(start)
				tokenizeCPU += cpuTime() - cpu
				if n < len(rows)*3000 {
					b.Fatalf("output has %d tokens, want about 40 million", n)
				}
			}
			b.ReportMetric(composeT.Seconds()/float64(b.N), "compose-s/op")
			b.ReportMetric(tokenizeT.Seconds()/float64(b.N), "tokenize-s/op")
			b.ReportMetric(float64(composeT)/float64(tokenizeT), "compose/tokenize")
			if tokenizeCPU > 0 {
				b.ReportMetric(float64(composeCPU)/float64(tokenizeCPU), "cpu-compose/tokenize")
			}
		})
	}
}
