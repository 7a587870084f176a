package hub

import (
	"fmt"
	"io"
	"time"
)

// progress draws one line per download on a terminal: name, bytes so far
// of the total, and the mean rate, rewritten in place at most every
// 200 ms and finished with a newline.
type progress struct {
	w           io.Writer
	name        string
	total       int64
	start, last time.Time
}

func newProgress(w io.Writer, name string, total int64) *progress {
	if w == nil {
		return nil
	}
	now := time.Now()
	return &progress{w: w, name: name, total: total, start: now, last: now}
}

func (p *progress) update(n int64) {
	if p == nil {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		p.draw(n, now, "")
	}
}

func (p *progress) done(n int64) {
	if p != nil {
		p.draw(n, time.Now(), "\n")
	}
}

func (p *progress) draw(n int64, now time.Time, end string) {
	rate := ""
	if s := now.Sub(p.start).Seconds(); s > 0 {
		rate = "  " + formatBytes(int64(float64(n)/s)) + "/s"
	}
	fmt.Fprintf(p.w, "\rdownloading %s  %s / %s%s\x1b[K%s", p.name, formatBytes(n), formatBytes(p.total), rate, end)
}

// formatBytes writes a size in B, kB, MB or GB (powers of 1000, as
// huggingface_hub's progress bars do).
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}
