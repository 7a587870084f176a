package tokenizer

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/testutil"
)

// benchModels are the folders benchmarked; llama3_1 shares llama3's vocab.
var benchModels = []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "mistral7b", "mistral7b-metaspace"}

// benchCorpus is the text of every golden line (edge cases, corpus chunks
// and random strings): the same texts the Rust reference is timed on.
func benchCorpus(b *testing.B) ([]string, int) {
	shared := testutil.RefDir(b)
	lines := testutil.ReadJSONL[goldenLine](b, filepath.Join(shared, "golden", "tokens", "qwen3.jsonl"))
	texts := make([]string, len(lines))
	n := 0
	for i, l := range lines {
		texts[i] = l.Text
		n += len(l.Text)
	}
	return texts, n
}

// BenchmarkEncode encodes the corpus on one goroutine, cache cold per model
// load but warm across iterations, like a long benchmark run.
func BenchmarkEncode(b *testing.B) {
	benchEachModel(b, func(tk *Tokenizer, t string) int { return len(tk.Encode(t)) })
}

// BenchmarkCount is the count-only path, one goroutine.
func BenchmarkCount(b *testing.B) {
	benchEachModel(b, (*Tokenizer).Count)
}

// benchEachModel runs count over the corpus for each model, in tokens/s.
func benchEachModel(b *testing.B, count func(*Tokenizer, string) int) {
	texts, size := benchCorpus(b)
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			tk := loadShared(b, model)
			b.SetBytes(int64(size))
			b.ResetTimer()
			tokens := 0
			for i := 0; i < b.N; i++ {
				for _, t := range texts {
					tokens += count(tk, t)
				}
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkCountFresh measures a first pass over text never seen, with the
// word cache empty: a fresh tokenizer per iteration, load time excluded.
func BenchmarkCountFresh(b *testing.B) {
	texts, size := benchCorpus(b)
	shared := testutil.RefDir(b)
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			var busy time.Duration
			for i := 0; i < b.N; i++ {
				tk, err := FromJSON(data)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for _, t := range texts {
					tk.Count(t)
				}
				busy += time.Since(start)
			}
			b.ReportMetric(float64(size*b.N)/busy.Seconds()/1e6, "coldMB/s")
		})
	}
}

// BenchmarkLoad times building a tokenizer from tokenizer.json bytes.
func BenchmarkLoad(b *testing.B) {
	shared := testutil.RefDir(b)
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := FromJSON(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadCached times a load from a warm cache (ISLKIT_CACHE): the
// cache file read, checked and built into a tokenizer.
func BenchmarkLoadCached(b *testing.B) {
	shared := testutil.RefDir(b)
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
			if err != nil {
				b.Fatal(err)
			}
			c := &Cache{Dir: b.TempDir(), Warn: func(msg string) { b.Fatal(msg) }}
			sum := sha256.Sum256(data)
			if _, err := c.LoadJSON(data, sum); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.LoadJSON(data, sha256.Sum256(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadFirst times a first load with the cache on: the parse plus
// writing the cache file (each iteration into an empty folder).
func BenchmarkLoadFirst(b *testing.B) {
	shared := testutil.RefDir(b)
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
			if err != nil {
				b.Fatal(err)
			}
			root := b.TempDir()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				c := &Cache{Dir: filepath.Join(root, strconv.Itoa(i)), Warn: func(msg string) { b.Fatal(msg) }}
				if _, err := c.LoadJSON(data, sha256.Sum256(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
