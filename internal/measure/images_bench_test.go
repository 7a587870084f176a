//go:build linux

package measure

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/pipeline"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
)

// BenchmarkImages measures a payload log as measure does (send records
// as `send --dry-run` writes them, read as JSONL, each line measured,
// checked against the ones before it and written out: pipeline.Map with
// one worker) whose chat bodies carry two PNG data URLs each (every image
// its own) and a text of about isl tokens (Qwen2.5-VL's processing,
// Qwen3's vocabulary), against the same log with the image parts removed,
// in the same run, interleaved. The time is the process's CPU time, so
// that the garbage collector's work for the images' bytes counts and a
// neighbour's does not. "vs_no_images_total" is the ratio of the totals
// (goal ≤ 1.2); a ratio of single passes would say where the collector
// happened to run. "ns/image_byte" is the extra time per byte of the
// images' data URLs. The images: 1280×720 and flat, 3.2 KB of base64
// each (compose's synthetic ones are smaller still), and, "photo",
// 320×240 of noise, 103 KB each, as large as a photograph's JPEG. Linux
// only.
func BenchmarkImages(b *testing.B) {
	m := loadMeasurer(b, "", time.Time{}, Options{ApplyChatTemplate: true})
	m.opts.Vision = serverprofile.LoadVision(filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl"), -1)
	for _, c := range []struct {
		isl, n int
		photo  bool
	}{{1000, 100, false}, {8000, 100, false}, {1000, 20, true}} {
		withLog, withoutLog := imageLogs(b, m, c.isl, c.n, c.photo)
		name := fmt.Sprintf("isl%d", c.isl)
		if c.photo {
			name += "-photo"
		}
		b.Run(name, func(b *testing.B) {
			var withTime, withoutTime time.Duration
			for i := 0; i < b.N; i++ {
				start := processCPU()
				measureLog(b, m, withLog)
				withTime += processCPU() - start
				start = processCPU()
				measureLog(b, m, withoutLog)
				withoutTime += processCPU() - start
			}
			b.ReportMetric(float64(c.n*b.N)/withTime.Seconds(), "payloads/s")
			b.ReportMetric(withTime.Seconds()/withoutTime.Seconds(), "vs_no_images_total")
			b.ReportMetric(float64((withTime-withoutTime).Nanoseconds())/float64(b.N*(len(withLog)-len(withoutLog))), "ns/image_byte")
		})
	}
}

// measureLog is cmd/measure's loop without its summary: each line
// measured (Line), checked for duplicates and written.
func measureLog(b *testing.B, m *Measurer, log []byte) {
	w := jsonl.NewWriter(io.Discard)
	var dedup Dedup
	_, err := pipeline.Map(context.Background(), jsonl.NewReader(bytes.NewReader(log), "bench"), w, 1,
		func(line jsonl.Line) (pipeline.Output[Result], error) {
			res, err := m.Line(line)
			return pipeline.Output[Result]{Lines: res.Lines, Value: res}, err
		}, func(err error, _ pipeline.Output[Result]) { b.Fatal(err) }, func(res Result) bool {
			keep, err := dedup.Check(res)
			if err != nil {
				b.Fatal(err)
			}
			return keep
		})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// processCPU is the process's CPU time, to the nanosecond
// (clock_gettime(CLOCK_PROCESS_CPUTIME_ID): every thread's, the garbage
// collector's included; getrusage's is in scheduler ticks, too coarse for
// one pass).
func processCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

const clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID

// imageLogs is a payload log of n send records at about isl text tokens
// each, their bodies with two PNG data URLs (1280×720 and flat, or of
// noise: photo), and the same log with the image parts removed.
func imageLogs(b *testing.B, m *Measurer, isl, n int, photo bool) (withLog, withoutLog []byte) {
	// Every image differs, so that nothing could be reused from one to
	// the next.
	noise := rand.New(rand.NewPCG(1, 2))
	image := func(i int) string {
		var img *image.Gray
		if photo {
			img = image.NewGray(image.Rect(0, 0, 320, 240))
			for k := range img.Pix {
				img.Pix[k] = byte(noise.Uint32())
			}
		} else {
			img = image.NewGray(image.Rect(0, 0, 1280, 720))
			img.Pix[0], img.Pix[1] = byte(i), byte(i>>8)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	// A record of compose's exact log: its target is what the body
	// counts, so that no gap is explained.
	record := func(k int, body []byte) []byte {
		res, err := m.Record(body)
		if err != nil {
			b.Fatal(err)
		}
		line, err := json.Marshal(map[string]any{"kind": records.KindRequest, "schema_version": records.SchemaVersion,
			"benchmark_id": "bench", "endpoint": "chat", "server": "vllm", "conversation_id": fmt.Sprintf("conv-%d", k),
			"conversation_index": k, "turn": 0, "pass": 0, "target_isl": *res.Requests[0].ISL.Templated,
			"dry_run": true, "payload": json.RawMessage(body)})
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	_, texts := benchPayloads(b, m, isl, n)
	var with, without [][]byte
	for k, text := range texts {
		images := []string{image(2 * k), image(2*k + 1)}
		parts := []map[string]any{}
		for _, u := range images {
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}})
		}
		parts = append(parts, map[string]any{"type": "text", "text": text})
		body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": []map[string]any{{"role": "user", "content": parts}}})
		with = append(with, record(k, body))
		body, _ = json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": []map[string]any{{"role": "user", "content": parts[2:]}}})
		without = append(without, record(k, body))
	}
	withLog = append(bytes.Join(with, []byte("\n")), '\n')
	withoutLog = append(bytes.Join(without, []byte("\n")), '\n')
	if res, err := m.Record(with[0]); err != nil || res.Requests[0].ISL.ImageTokens == nil {
		b.Fatalf("images not counted: %v", err)
	}
	return withLog, withoutLog
}
