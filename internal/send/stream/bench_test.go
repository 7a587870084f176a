package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// BenchmarkReadStream parses a 10-chunk SSE response as the client does:
// send's own cost per chunk (CPU per chunk in make bench-send).
func BenchmarkReadStream(b *testing.B) {
	var sse strings.Builder
	for range 10 {
		sse.WriteString(`data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}` + "\n\n")
	}
	sse.WriteString(`data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}` + "\n\ndata: [DONE]\n\n")
	body := sse.String()
	b.ReportAllocs()
	for b.Loop() {
		var res records.Result
		if err := ReadChat(strings.NewReader(body), time.Now(), &res); err != nil || res.Chunks != 11 {
			b.Fatal(err, res.Chunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/11, "ns/chunk")
}
