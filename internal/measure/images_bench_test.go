//go:build linux

package measure

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/serverprofile"
)

// BenchmarkImages measures a payload log whose chat bodies carry two
// 1280×720 PNG data URLs (each image its own) and a text of about isl tokens each (Qwen2.5-VL's
// processing, Qwen3's vocabulary) against the same log with the image
// parts removed, in the same run, interleaved; "vs_no_images" is the ratio
// of their fastest passes' CPU times (goal ≤ 1.2), "vs_no_images_total" of
// their total CPU times. Linux only (CLOCK_THREAD_CPUTIME_ID).
func BenchmarkImages(b *testing.B) {
	m := loadMeasurer(b, "", time.Time{}, Options{ApplyChatTemplate: true})
	m.opts.Vision = serverprofile.LoadVision(filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl"), -1)
	// Every image differs, so that nothing could be reused from one to
	// the next.
	image := func(i int) string {
		img := image.NewGray(image.Rect(0, 0, 1280, 720))
		img.Pix[0], img.Pix[1] = byte(i), byte(i>>8)
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	for _, isl := range []int{1000, 8000} {
		_, texts := benchPayloads(b, m, isl, 20)
		var with, without [][]byte
		for k, text := range texts {
			images := []string{image(2 * k), image(2*k + 1)}
			parts := []map[string]any{}
			for _, u := range images {
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}})
			}
			parts = append(parts, map[string]any{"type": "text", "text": text})
			body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": []map[string]any{{"role": "user", "content": parts}}})
			with = append(with, body)
			body, _ = json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": []map[string]any{{"role": "user", "content": parts[2:]}}})
			without = append(without, body)
		}
		if res, err := m.Record(with[0]); err != nil || res.Requests[0].ISL.ImageTokens == nil {
			b.Fatalf("images not counted: %v", err)
		}
		b.Run(fmt.Sprintf("isl%d", isl), func(b *testing.B) {
			// The thread's own CPU time (this goroutine locked to it): on
			// a shared machine wall time measures the neighbours too.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var withTime, withoutTime time.Duration
			fastestWith, fastestWithout := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
			for i := 0; i < b.N; i++ {
				start := threadCPU()
				recordWithImages(b, m, with)
				d := threadCPU() - start
				withTime, fastestWith = withTime+d, min(fastestWith, d)
				start = threadCPU()
				recordWithoutImages(b, m, without)
				d = threadCPU() - start
				withoutTime, fastestWithout = withoutTime+d, min(fastestWithout, d)
			}
			b.ReportMetric(float64(len(with)*b.N)/withTime.Seconds(), "payloads/s")
			// The ratio of the fastest pass of each loop: a pass that a
			// neighbour's cache traffic or a GC cycle slowed is not the
			// code's cost, and on a shared machine the ratio of the totals
			// swings with them (1.01–1.46× over 8 runs for the same code).
			b.ReportMetric(fastestWith.Seconds()/fastestWithout.Seconds(), "vs_no_images")
			b.ReportMetric(withTime.Seconds()/withoutTime.Seconds(), "vs_no_images_total")
		})
	}
}

// recordWithImages and recordWithoutImages measure each line: two
// functions, so that a profile (or callgrind's inclusive instruction
// counts, repeatable on a loaded machine) tells the two loops apart.
//
//go:noinline
func recordWithImages(b *testing.B, m *Measurer, lines [][]byte) { recordAll(b, m, lines) }

//go:noinline
func recordWithoutImages(b *testing.B, m *Measurer, lines [][]byte) { recordAll(b, m, lines) }

func recordAll(b *testing.B, m *Measurer, lines [][]byte) {
	for _, line := range lines {
		if _, err := m.Record(line); err != nil {
			b.Fatal(err)
		}
	}
}

// threadCPU is the calling thread's CPU time, to the nanosecond
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID); getrusage's is in scheduler
// ticks, too coarse for one pass).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
