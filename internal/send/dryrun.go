package send

import (
	"bufio"
	"fmt"
	"io"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
)

// Output formats of a dry run.
const (
	FormatJSONL        = "jsonl"
	FormatAIPerfInputs = "aiperf-inputs"
)

// Shard selects the conversations of sender I of N (Index mod N == I), so
// N senders over the same file send each conversation exactly once. The
// zero value selects everything.
type Shard struct{ I, N int }

// Has reports whether c belongs to the shard.
func (s Shard) Has(c *records.Conversation) bool {
	return s.N <= 1 || c.Index%s.N == s.I
}

// ParseShard parses "I/N".
func ParseShard(v string) (Shard, error) {
	var s Shard
	if v == "" {
		return s, nil
	}
	var rest string
	if n, _ := fmt.Sscanf(v, "%d/%d%s", &s.I, &s.N, &rest); n != 2 || s.N < 1 || s.I < 0 || s.I >= s.N {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 0 <= I < N", v)
	}
	return s, nil
}

// DryRun writes what a live run's first pass would send: one record per
// request (FormatJSONL) or AIPerf's inputs.json document
// (FormatAIPerfInputs), with compose's synthetic replies as history. It
// returns the number of requests.
func DryRun(w io.Writer, convs []records.Conversation, b *Builder, shard Shard, format string) (int, error) {
	switch format {
	case "", FormatJSONL:
		return dryRunJSONL(w, convs, b, shard)
	case FormatAIPerfInputs:
		return dryRunAIPerf(w, convs, b, shard)
	}
	return 0, fmt.Errorf("--format %q: want %s or %s", format, FormatJSONL, FormatAIPerfInputs)
}

func dryRunJSONL(w io.Writer, convs []records.Conversation, b *Builder, shard Shard) (int, error) {
	jw := jsonl.NewWriter(w)
	n := 0
	cache := newCachePredictor()
	for i := range convs {
		c := &convs[i]
		if !shard.Has(c) {
			continue
		}
		for t := range c.Turns {
			built, err := b.Build(c, t, 0, nil)
			if err != nil {
				return n, err
			}
			rec := newRecord(c, t, 0, built)
			if b.opts.ResponsesChain {
				prev := ""
				if t > 0 {
					prev = DryRunResponseID(c, t-1)
				}
				if err := b.chain(&built, &rec, prev); err != nil {
					return n, err
				}
			}
			rec.DryRun = true
			rec.ExpectedCachedTokens = cache.expect(c, t, 0, built.Marker, false)
			if err := jw.Encode(&rec); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, jw.Flush()
}

// dryRunAIPerf writes {"data":[{"session_id","payloads":[...]}]}, AIPerf's
// inputs.json (and its inputs_json dataset type), one session per line.
// Unlike AIPerf's own export the payloads are the full requests, history
// and marker included, so replaying them reproduces the same wire ISL.
// Each payload has the shape AIPerf's endpoint writes: chat messages; a
// completions "prompt" as a list of one string; Responses "instructions"
// and "input" message items ({"type":"message","role","content"}) with
// max_output_tokens.
func dryRunAIPerf(w io.Writer, convs []records.Conversation, b *Builder, shard Shard) (int, error) {
	b = b.aiperfShape()
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"data": [`)
	n, sessions := 0, 0
	for i := range convs {
		c := &convs[i]
		if !shard.Has(c) {
			continue
		}
		if sessions > 0 {
			bw.WriteByte(',')
		}
		sessions++
		id, _ := json.Marshal(c.ID)
		bw.WriteString("\n{\"session_id\": ")
		bw.Write(id)
		bw.WriteString(`, "payloads": [`)
		for t := range c.Turns {
			built, err := b.Build(c, t, 0, nil)
			if err != nil {
				return n, err
			}
			if t > 0 {
				bw.WriteString(", ")
			}
			bw.Write(built.Body)
			n++
		}
		bw.WriteString("]}")
	}
	bw.WriteString("\n]}\n")
	return n, bw.Flush()
}
