package tokenizer_test

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
)

// longText is about n bytes of the embedded corpus, repeated.
func longText(b *testing.B, n int) string {
	b.Helper()
	text, err := corpus.Default()
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(text)
	}
	return sb.String()[:n]
}

// peakHeap runs fn and returns the largest live heap seen above the heap
// before it, sampled every few milliseconds.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// BenchmarkLongText counts and encodes one 50 MB text (issue 11, item 17):
// memory must stay a few times the text's size. It reports the peak live
// heap over the text's size ("peak/size") besides B/op; run it with
// -benchtime 1x.
func BenchmarkLongText(b *testing.B) {
	const size = 50 << 20
	text := longText(b, size)
	models := []string{"qwen3", "mistral7b"}
	for _, name := range models {
		for _, op := range []string{"Count", "Encode"} {
			b.Run(name+"/"+op, func(b *testing.B) {
				tk := benchTokenizer(b, name)
				b.ReportAllocs()
				b.SetBytes(size)
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeap(func() {
						if op == "Count" {
							tk.Count(text)
						} else {
							tk.Encode(text)
						}
					}))
				}
				b.ReportMetric(float64(peak)/size, "peak/size")
			})
		}
	}
}

// benchTokenizer is the embedded Qwen3, or a reference model (testutil.RefModel).
func benchTokenizer(b *testing.B, name string) *tokenizer.Tokenizer {
	b.Helper()
	var tk *tokenizer.Tokenizer
	var err error
	if name == "qwen3" {
		var src *modelsrc.Source
		if src, err = modelsrc.Default(); err == nil {
			tk, err = src.Tokenizer()
		}
	} else {
		tk, err = tokenizer.LoadFile(filepath.Join(testutil.RefModel(b, name), "tokenizer.json"))
	}
	if err != nil {
		b.Fatal(err)
	}
	return tk
}

// TestLongTextAllocationBounded: counting a 6 MB text allocates a few
// times its size, not the ~150 times a single pass over it took (issue 11,
// item 17). Bytes allocated do not depend on timing; BenchmarkLongText
// gives the peak heap for 50 MB.
func TestLongTextAllocationBounded(t *testing.T) {
	const size = 6 << 20
	text := strings.Repeat("Call me Ishmael. Some years ago, never mind how long precisely, having little money in my purse. ", size/96+1)[:size]
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tk, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tk.Count(text)
	runtime.ReadMemStats(&after)
	ratio := float64(after.TotalAlloc-before.TotalAlloc) / size
	t.Logf("allocated %.1f times the text size", ratio)
	if ratio > 20 {
		t.Errorf("Count of %d bytes allocated %.0f times its size, want at most 20", size, ratio)
	}
}
