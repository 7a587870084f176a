package compose

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// DatasetOptions configure compose --dataset.
type DatasetOptions struct {
	// OSL is max_tokens of a turn the dataset has no reply for.
	OSL            int
	Seed           uint64
	BenchmarkID    string
	Model          string
	Workers        int
	CacheBlockSize int // as TraceOptions
}

// Dataset replays dataset dialogs as they are: their texts kept, every
// turn's request rendered and encoded once, so each records its exact wire
// ISL (target and expected alike), with the dataset's replies as history
// and their token length as max_tokens (vLLM's ShareGPT sampler does the
// same), else OSL.
type Dataset struct {
	opts  DatasetOptions
	probe *records.Probe
	model *Model

	mu      sync.Mutex
	skipped []workload.Skipped
}

// Skipped lists the dialogs Run left out, by line: those whose request the
// chat template refuses (a server with this template would refuse it too).
func (d *Dataset) Skipped() []workload.Skipped {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := append([]workload.Skipped(nil), d.skipped...)
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// NewDataset checks the options against probe p.
func NewDataset(p *records.Probe, m *Model, opts DatasetOptions) (*Dataset, error) {
	if opts.OSL < 1 {
		return nil, usagef("--osl must be at least 1 token (got %d)", opts.OSL)
	}
	if p.Endpoint.Or() != endpoint.Chat {
		return nil, usagef("--dataset composes chat requests only (the probe record is for --endpoint %s); probe with --endpoint chat", p.Endpoint)
	}
	if opts.BenchmarkID == "" {
		opts.BenchmarkID = DefaultBenchmarkID(opts.Seed)
	}
	opts.Workers = max(1, opts.Workers)
	return &Dataset{opts: opts, probe: p, model: m}, nil
}

// Run writes one conversation per dialog, in file order, leaving out (see
// Skipped) those the template refuses.
func (d *Dataset) Run(ctx context.Context, w *jsonl.Writer, dialogs []workload.Dialog) error {
	return runOrdered(ctx, w, len(dialogs), d.opts.Workers, func(i int) (*records.Conversation, error) {
		return d.Conversation(i, dialogs[i])
	})
}

// Conversation builds conversation i from dialog dl.
func (d *Dataset) Conversation(i int, dl workload.Dialog) (*records.Conversation, error) {
	tok := d.model.Tokenizer
	conv := &records.Conversation{
		Kind:           records.KindConversation,
		SchemaVersion:  records.SchemaVersion,
		ID:             "conv-" + strconv.Itoa(i),
		Index:          i,
		BenchmarkID:    d.opts.BenchmarkID,
		CacheBust:      d.probe.CacheBust,
		Landing:        cachebust.Route(d.probe.CacheBust, dl.System != nil),
		Exact:          true,
		Model:          d.opts.Model,
		CacheBlockSize: d.opts.CacheBlockSize,
	}
	if dl.System != nil {
		n := tok.Count(*dl.System)
		conv.SystemPrompt = &records.SystemPrompt{Text: *dl.System, RequestedTokens: n, BareTokens: n}
	}
	marker := wire.Marker(conv, 0)
	conv.Turns = make([]records.Turn, len(dl.Turns))
	for k, dt := range dl.Turns {
		t := &conv.Turns[k]
		t.Index, t.Text, t.BareTokens, t.MaxTokens = k, dt.User, tok.Count(dt.User), d.opts.OSL
		if dt.Reply != nil {
			t.Assistant = *dt.Reply
			if n := tok.Count(*dt.Reply); n > 0 {
				t.MaxTokens = n
			}
		}
		ids, err := d.wireIDs(conv, k, marker)
		var te *templateError
		if errors.As(err, &te) {
			d.mu.Lock()
			d.skipped = append(d.skipped, workload.Skipped{Line: dl.Line, Reason: fmt.Sprintf("turn %d: the chat template refuses the request (%v): skipped", k, te.err)})
			d.mu.Unlock()
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("dataset line %d turn %d: %w", dl.Line, k, err)
		}
		n := len(ids)
		t.TargetISL, t.WireISL = max(n, 1), &n
		if d.opts.CacheBlockSize > 0 {
			t.CacheBlocks = prefixcache.Chain(ids, d.opts.CacheBlockSize)
		}
	}
	return conv, nil
}

// wireIDs is turn k's request's wire tokens, built as send builds it.
func (d *Dataset) wireIDs(conv *records.Conversation, k int, marker string) ([]int, error) {
	return wireIDs(d.model, conv, k, marker)
}

// wireIDs is the wire tokens of turn k's request of conv as send builds
// it, as wire.CountEndpoint counts them: rendered with the generation
// prompt and encoded without special tokens (with them for responses; a
// completions prompt is not rendered and encoded with them); without a
// template, the contents joined by one space (wire.Count's rule). A
// template that raises gives a *templateError.
func wireIDs(m *Model, conv *records.Conversation, k int, marker string) ([]int, error) {
	msgs, err := wire.Messages(conv, k, marker, nil)
	if err != nil {
		return nil, err
	}
	encode := m.Tokenizer.Encode
	if conv.Endpoint.AddsSpecialTokens() {
		// vLLM's completions and responses encode with special tokens
		// (wire.CountEndpoint).
		encode = m.Tokenizer.EncodeWithSpecialTokens
	}
	if !conv.Endpoint.Templated() {
		prompt, _ := msgs[0]["content"].(string)
		return encode(prompt), nil
	}
	if m.Template == nil {
		parts := make([]string, len(msgs))
		for i, msg := range msgs {
			parts[i], _ = msg["content"].(string)
		}
		return m.Tokenizer.Encode(strings.Join(parts, " ")), nil // measure's bare count, as wire.CountEndpoint
	}
	text, err := m.Template.Render(chat.RenderInput{Messages: msgs, AddGenerationPrompt: true, Now: m.Now})
	if err != nil {
		return nil, &templateError{err}
	}
	return encode(text), nil
}

type templateError struct{ err error }

func (e *templateError) Error() string { return "rendering the request: " + e.err.Error() }

// runOrdered makes conversations 0..n-1 with up to workers at a time and
// writes them in order, leaving out those make1 returns nil for; it stops
// at the first error (writing nothing of its batch) or when ctx ends.
func runOrdered(ctx context.Context, w *jsonl.Writer, n, workers int, make1 func(int) (*records.Conversation, error)) error {
	batch := workers * 8
	out := make([]*records.Conversation, batch)
	errs := make([]error, batch)
	for base := 0; base < n; base += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := min(batch, n-base)
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(workers, m) {
			wg.Go(func() {
				for j := range next {
					out[j], errs[j] = make1(base + j)
				}
			})
		}
		for j := range m {
			next <- j
		}
		close(next)
		wg.Wait()
		for j := range m {
			if errs[j] != nil {
				return errs[j]
			}
		}
		for j := range m {
			if out[j] == nil {
				continue
			}
			if err := w.Encode(out[j]); err != nil {
				return err
			}
		}
	}
	return nil
}
