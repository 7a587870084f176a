package compose

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
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
	// ISL > 0 resizes every user turn (--isl, --isl-stddev): see Dataset.
	ISL       int
	ISLStddev float64
	// Corpus extends turns shorter than their budget ("" = the embedded
	// default); only read with ISL or Live.
	Corpus string
	// Live writes what send --exact needs (as Options.Live): the model
	// the conversations were composed for and, per turn, a reserve: the
	// text that follows the turn's text, its own (when it was cut) then
	// the corpus, from where a resize with --isl continued it (a random
	// corpus place without --isl, drawn from the seed).
	Live bool
	// AllowOverContext: as Options.
	AllowOverContext bool
	// OverContext says what to do with a dialog one of whose requests is
	// above the model's context length ("" is skip).
	OverContext OverContext
	// Server: as Options.
	Server serverprofile.Profile
}

// Dataset replays dataset dialogs, with the dataset's replies as history
// and their token length as max_tokens (vLLM's ShareGPT sampler does the
// same), else OSL.
//
// Without ISL the texts are kept: every turn's request is rendered and
// encoded once, so each records its exact wire ISL (target and expected
// alike). With ISL every user turn is resized (cut to a prefix of its own
// tokens, or its own text continued with corpus text) until its request
// counts exactly its target, compose's multi-turn definition: turn 0's
// target is its drawn ISL (+ one message wrap + the system prompt's count
// when the dialog has one); turn k's is turn k−1's + one wrap + the
// dataset reply's count + its own ISL. A target below what the template,
// history and marker alone cost is marked unreachable.
type Dataset struct {
	opts  DatasetOptions
	probe *records.Probe
	model *Model
	gen   *sizing.Gen // the corpus (ISL > 0 or Live only)
	pin   *records.ModelPin
	over  overContext

	mu      sync.Mutex
	skipped []workload.Skipped
	// unreachable counts the turns marked so, first the first one's.
	unreachable, turns int
	first              *records.Unreachable
	firstIndex         int
}

// Warnings says, after Run, how many turns are unreachable and why.
func (d *Dataset) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.unreachable == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d turn(s) are unreachable: %s (the first needs at least %d tokens, %d over its target); their records say by how much; raise --isl or drop the marker",
		d.unreachable, d.turns, d.first.Reason, d.first.MinISL, d.first.Short)}
}

// OverContext lists, by line, the dialogs whose requests outgrow the
// model's context length: left out, or kept with --over-context keep.
func (d *Dataset) OverContext() []workload.Skipped { return d.over.list() }

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
	switch {
	case opts.OSL < 1:
		return nil, usagef("--osl must be at least 1 token (got %d)", opts.OSL)
	case opts.ISL < 0 || opts.ISL > MaxLength:
		return nil, usagef("--isl must be between 1 and %d tokens (got %d)", MaxLength, opts.ISL)
	case !finite(opts.ISLStddev) || opts.ISLStddev < 0 || opts.ISLStddev > MaxLength:
		return nil, usagef("--isl-stddev must be a number between 0 and %d (got %g)", MaxLength, opts.ISLStddev)
	case opts.ISLStddev > 0 && opts.ISL == 0:
		return nil, usagef("--isl-stddev needs --isl (a spread without a mean)")
	}
	if p.Endpoint.OrChat() != endpoint.Chat {
		return nil, usagef("--dataset composes chat requests only (the probe record is for --endpoint %s); probe with --endpoint chat", p.Endpoint)
	}
	opts.BenchmarkID = benchmarkID(opts.BenchmarkID)
	opts.Workers = max(1, opts.Workers)
	d := &Dataset{opts: opts, probe: p, model: m}
	mode, err := validOverContext(opts.OverContext)
	if err != nil {
		return nil, err
	}
	d.over = overContext{context: ContextLength(m.Source), model: m.Source.Name, mode: mode}
	if d.pin, err = composedFor(p, m); err != nil {
		return nil, err
	}
	if opts.ISL == 0 && !opts.Live {
		return d, nil
	}
	if ctx := ContextLength(m.Source); ctx > 0 && opts.ISL > ctx && !opts.AllowOverContext {
		return nil, usagef("--isl %d is above the model's context length %d (model_max_length of %s): a server refuses such requests; lower --isl, or give --allow-over-context to compose them anyway", opts.ISL, ctx, m.Source.Name)
	}
	text := opts.Corpus
	if text == "" {
		if text, err = corpus.Default(); err != nil {
			return nil, err
		}
	}
	if d.gen, err = corpusGen(text, m, max(opts.Workers, runtime.GOMAXPROCS(0))); err != nil {
		return nil, err
	}
	return d, nil
}

// Run writes one conversation per dialog, in file order, leaving out (see
// Skipped) those the template refuses.
func (d *Dataset) Run(ctx context.Context, w *jsonl.Writer, dialogs []workload.Dialog) error {
	return runOrdered(ctx, w, len(dialogs), d.opts.Workers, func(i int) (*records.Conversation, error) {
		conv, err := d.Conversation(i, dialogs[i])
		if conv != nil {
			d.count(conv)
		}
		return conv, err
	})
}

func (d *Dataset) count(conv *records.Conversation) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range conv.Turns {
		d.turns++
		if t.Unreachable == nil {
			continue
		}
		// Workers finish out of order: keep the earliest conversation's.
		if d.first == nil || conv.Index < d.firstIndex {
			u := *t.Unreachable
			d.first, d.firstIndex = &u, conv.Index
		}
		d.unreachable++
	}
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
		Server:         string(orDefault(d.opts.Server)),
		CacheBlockSize: d.opts.CacheBlockSize,
		ComposedFor:    d.pin,
		Tools:          dl.Tools,
	}
	if dl.System != nil {
		n := tok.Count(*dl.System)
		conv.SystemPrompt = &records.SystemPrompt{Text: *dl.System, Parts: dl.SystemParts, RequestedTokens: n, BareTokens: n}
	}
	marker := wire.Marker(conv, 0)
	// The draws depend only on the seed and i, as compose's.
	rng := rand.New(rand.NewPCG(d.opts.Seed, uint64(i)+1))
	// The reserves' corpus places without --isl: a stream of their own,
	// so that --live leaves every other field as it was.
	reserveAt := rand.New(rand.NewPCG(d.opts.Seed^liveSeed, uint64(i)+1))
	conv.Turns = make([]records.Turn, len(dl.Turns))
	target, replyTokens := 0, 0
	overNoted := false
	for k, dt := range dl.Turns {
		t := &conv.Turns[k]
		t.Index, t.Text, t.BareTokens, t.MaxTokens = k, dt.User, tok.Count(dt.User), d.opts.OSL
		t.User, t.History = dt.UserMessage, dt.History
		if d.opts.ISL > 0 {
			isl := min(positiveNormal(rng, float64(d.opts.ISL), d.opts.ISLStddev), MaxLength)
			switch {
			case t.User != nil || k == 0 && conv.Tools != nil || k > 0 && conv.Turns[k-1].History != nil:
				// What the dataset's tools, other text parts or history of
				// tool calls and results add is what they count: the
				// request with an empty text, then the ISL.
				base, err := d.emptyCount(conv, k, marker)
				if err != nil {
					return d.skip(dl, k, err)
				}
				target = base + isl
			case k == 0:
				target = isl
				if conv.SystemPrompt != nil {
					target += d.probe.Overhead.Wrap + conv.SystemPrompt.BareTokens
				}
			default:
				target += d.probe.Overhead.Wrap + replyTokens + isl
			}
			t.TargetISL = target
		}
		replyTokens = 0
		if dt.Reply != nil {
			t.Assistant = *dt.Reply
			if replyTokens = tok.Count(*dt.Reply); replyTokens > 0 {
				t.MaxTokens = replyTokens
			}
		}
		ids, n, err := d.wireIDs(conv, k, marker)
		switch {
		case err == nil && d.opts.ISL > 0:
			ids, n, err = d.resize(conv, k, marker, n, rng.IntN(len(d.gen.IDs())))
		case err == nil && d.opts.Live:
			own := d.model.Tokenizer.Encode(t.Text)
			r := liveReserve(conv, k)
			t.Reserve = d.gen.Continued(t.Text, own, reserveAt.IntN(len(d.gen.IDs())), r).Continuation(0, len(own), r)
		}
		if err != nil {
			return d.skip(dl, k, err)
		}
		t.WireISL = &n
		if !overNoted { // a dialog is noted once, at its first request above
			over, skip := d.over.above(dl.Line, dl.InArray, k, n)
			if skip {
				return nil, nil
			}
			overNoted = over
		}
		if d.opts.ISL == 0 {
			t.TargetISL = max(n, 1)
		}
		if d.opts.CacheBlockSize > 0 {
			t.CacheBlocks = prefixcache.Chain(ids, d.opts.CacheBlockSize)
		}
	}
	return conv, nil
}

// skip leaves dialog dl out when err says the server refuses turn k's
// request (its rules or its template: a server of that profile would
// refuse it too); any other error is returned.
func (d *Dataset) skip(dl workload.Dialog, k int, err error) (*records.Conversation, error) {
	var te *templateError
	if !errors.As(err, &te) {
		return nil, fmt.Errorf("dataset %s turn %d: %w", dl.Pos(), k, err)
	}
	reason := fmt.Sprintf("turn %d: the chat template refuses the request (%v): skipped", k, te.err)
	if serverprofile.IsRefusal(te.err) {
		reason = fmt.Sprintf("turn %d: %v: skipped", k, te.err)
	}
	d.mu.Lock()
	d.skipped = append(d.skipped, workload.Skipped{Line: dl.Line, InArray: dl.InArray, Reason: reason})
	d.mu.Unlock()
	return nil, nil
}

// emptyCount is turn k's request's count with an empty text.
func (d *Dataset) emptyCount(conv *records.Conversation, k int, marker string) (int, error) {
	t := &conv.Turns[k]
	text := t.Text
	t.Text = ""
	_, n, err := d.wireIDs(conv, k, marker)
	t.Text = text
	return n, err
}

// resize sets turn k's text so that its request counts exactly the turn's
// target, or marks it unreachable when a one-token text already
// overshoots, and returns the request's wire tokens. asIs is the request's
// count with the dataset's own text, which gives the first budget (the
// count is nearly linear in the text's tokens); start is where in the
// corpus a too-short text continues.
func (d *Dataset) resize(conv *records.Conversation, k int, marker string, asIs, start int) ([]int, int, error) {
	t := &conv.Turns[k]
	own := t.Text
	ownIDs := d.model.Tokenizer.Encode(own)
	guess := len(ownIDs) + t.TargetISL - asIs
	eval := func(text string) (sizing.Attempt, error) {
		t.Text = text
		_, n, err := d.wireIDs(conv, k, marker)
		if err != nil {
			return sizing.Attempt{}, err
		}
		return sizing.Attempt{Text: text, Wire: n}, nil
	}
	var a sizing.Attempt
	var src *sizing.Gen
	out := sizing.Stuck
	reserve := 0
	if d.opts.Live {
		reserve = liveReserve(conv, k)
	}
	for try := 0; try < 4 && out == sizing.Stuck; try++ {
		// Each try continues the text from another corpus place; the
		// turn's own text always comes first.
		src = d.gen.Continued(own, ownIDs, start+try*(len(d.gen.IDs())/5+1), max(0, guess-len(ownIDs))+guess/4+64+reserve)
		var err error
		if a, out, err = src.SearchPrefix(guess, t.TargetISL, eval); err != nil {
			return nil, 0, err
		}
	}
	if out == sizing.Stuck {
		return nil, 0, fmt.Errorf("cannot reach the exact wire ISL %d with this tokenizer and template (closest below: %d)", t.TargetISL, a.Wire)
	}
	t.Text = a.Text
	t.BareTokens = d.model.Tokenizer.Count(t.Text)
	if d.opts.Live {
		// What follows the text found in the text it was cut from: the
		// rest of its own, then the corpus.
		t.Reserve = src.Continuation(a.Start, a.Len, reserve)
	}
	ids, n, err := d.wireIDs(conv, k, marker)
	if err != nil {
		return nil, 0, err
	}
	if out == sizing.Unreachable {
		t.Unreachable = &records.Unreachable{MinISL: n, Short: n - t.TargetISL,
			Reason: "the chat template, history and marker alone exceed the target with a one-token text"}
	} else if n != t.TargetISL {
		return nil, 0, fmt.Errorf("the resized request encodes to %d tokens, not its target %d", n, t.TargetISL)
	}
	return ids, n, nil
}

// liveSeed sets the reserves' random stream apart from the sizes'.
const liveSeed = 0x6c697665

// wireIDs is turn k's request's wire tokens and count, built as send
// builds it (compose's wireIDs).
func (d *Dataset) wireIDs(conv *records.Conversation, k int, marker string) ([]int, int, error) {
	return wireIDs(d.model, conv, k, marker)
}

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
