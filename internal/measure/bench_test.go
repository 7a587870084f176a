package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/pipeline"
	"github.com/islkit/islkit/internal/report"
)

// benchPayloads builds n single-turn chat bodies of about isl tokens each,
// cut from the embedded corpus, with a cache-bust marker, as send writes
// them; texts are their user contents.
func benchPayloads(b testing.TB, m *Measurer, isl, n int) (bodies [][]byte, texts []string) {
	b.Helper()
	text, err := corpus.Default()
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields(text)
	tok := m.opts.Tokenizer
	pos := 0
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for n := 0; n < isl; {
			var chunk strings.Builder
			for k := 0; k < 50; k++ {
				chunk.WriteString(words[pos%len(words)])
				chunk.WriteByte(' ')
				pos++
			}
			n += tok.Count(chunk.String()) // close enough: the size is what matters
			sb.WriteString(chunk.String())
		}
		content := fmt.Sprintf("[rid:%012x]\n\n%s", i, sb.String())
		body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100,
			"messages": []map[string]any{{"role": "user", "content": content}}})
		bodies = append(bodies, body)
		texts = append(texts, content)
	}
	return bodies, texts
}

// BenchmarkPayloads measures chat bodies (--apply-chat-template), bare and
// as send records carrying them, against counting the same texts with the
// tokenizer alone, in the same run; the "vs_tokenizer" metric is their
// throughput ratio (goal ≥ 0.8).
func BenchmarkPayloads(b *testing.B) {
	m := defaultMeasurer(b)
	for _, isl := range []int{1000, 8000} {
		bodies, texts := benchPayloads(b, m, isl, 20)
		size := 0
		for _, t := range texts {
			size += len(t)
		}
		// Send records as exact compose and send --dry-run write them: the
		// target is met, so there is no gap to explain (a gap costs extra
		// renders and counts of the contents).
		sendRecords := make([][]byte, len(bodies))
		for i, body := range bodies {
			res, err := m.Record(body)
			if err != nil {
				b.Fatal(err)
			}
			sendRecords[i] = fmt.Appendf(nil, `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c%d","conversation_index":%d,"turn":0,"pass":0,"target_isl":%d,"max_tokens":100,"marker":"","cache_bust":"first_turn_prefix","marker_landing":"first_user_turn/prefix","dry_run":true,"payload":%s}`, i, i, *res.Requests[0].ISL.Templated, body)
		}
		for _, shape := range []struct {
			name  string
			lines [][]byte
		}{{"body", bodies}, {"send", sendRecords}} {
			b.Run(fmt.Sprintf("isl%d/%s", isl, shape.name), func(b *testing.B) {
				b.SetBytes(int64(size))
				var measureTime, tokTime time.Duration
				for i := 0; i < b.N; i++ {
					start := time.Now()
					for _, line := range shape.lines {
						if _, err := m.Record(line); err != nil {
							b.Fatal(err)
						}
					}
					measureTime += time.Since(start)
					start = time.Now()
					for _, t := range texts {
						m.opts.Tokenizer.Count(t)
					}
					tokTime += time.Since(start)
				}
				b.ReportMetric(float64(len(bodies)*b.N)/measureTime.Seconds(), "payloads/s")
				b.ReportMetric(tokTime.Seconds()/measureTime.Seconds(), "vs_tokenizer")
			})
		}
	}
}

// BenchmarkWorkers runs the whole measure pipeline (JSONL in, JSONL out)
// with 1 and 2 workers; compare the two ns/op for the multi-core speed-up.
func BenchmarkWorkers(b *testing.B) {
	m := defaultMeasurer(b)
	bodies, _ := benchPayloads(b, m, 1000, 200)
	input := append(bytes.Join(bodies, []byte("\n")), '\n')
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers%d", workers), func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			for i := 0; i < b.N; i++ {
				w := jsonl.NewWriter(io.Discard)
				_, err := pipeline.Map(context.Background(), jsonl.NewReader(bytes.NewReader(input), "bench"), w, workers,
					func(line jsonl.Line) (pipeline.Output[[]report.Request], error) {
						res, err := m.Record(line.Data)
						return pipeline.Output[[]report.Request]{Lines: res.Lines, Value: res.Requests}, err
					}, func(error, pipeline.Output[[]report.Request]) {}, nil)
				if err != nil {
					b.Fatal(err)
				}
				w.Flush()
			}
			b.ReportMetric(float64(len(bodies)*b.N)/b.Elapsed().Seconds(), "payloads/s")
		})
	}
}
