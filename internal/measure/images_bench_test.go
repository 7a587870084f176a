//go:build linux

package measure

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/serverprofile"
)

// BenchmarkImages measures a payload log whose chat bodies carry two
// 1280×720 PNG data URLs (each image its own) and a text of about isl tokens each (Qwen2.5-VL's
// processing, Qwen3's vocabulary) against the same log with the image
// parts removed, in the same run, interleaved; "vs_no_images" is the ratio
// of their CPU times (goal ≤ 1.2). Linux only (RUSAGE_THREAD).
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
			for i := 0; i < b.N; i++ {
				start := threadCPU()
				for _, line := range with {
					if _, err := m.Record(line); err != nil {
						b.Fatal(err)
					}
				}
				withTime += threadCPU() - start
				start = threadCPU()
				for _, line := range without {
					if _, err := m.Record(line); err != nil {
						b.Fatal(err)
					}
				}
				withoutTime += threadCPU() - start
			}
			b.ReportMetric(float64(len(with)*b.N)/withTime.Seconds(), "payloads/s")
			b.ReportMetric(withTime.Seconds()/withoutTime.Seconds(), "vs_no_images")
		})
	}
}

// threadCPU is the calling thread's CPU time (user and system).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rusageThread = 1 // RUSAGE_THREAD
