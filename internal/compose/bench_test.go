package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
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
				c, err := New(p, m, text, Options{ISL: 1000, OSL: 128, Conversations: 1000, Turns: 1, Seed: 1, Exact: true, Workers: workers, ISLSet: true})
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
