// Package compose builds synthetic conversations whose requests reach an
// exact input sequence length on the wire. It follows AIPerf's ISL budget
// compensation (seeds isl-budget-compensation.md, aiperf-behaviour.md §4):
// the first user turn gives up the template's fixed cost, its wrap and the
// marker when the marker lands there, later turns their wrap, and a marker
// on the shared system prompt shortens that prompt instead. In exact mode
// (the default) it then renders each request as send will build it
// (internal/wire) and adjusts the turn's text until the templated count is
// the target.
//
// Targets. Turn 0's request should count ISL tokens plus, when there is a
// shared system prompt, that prompt's requested length and one message
// wrap (the system prompt is additive, as in AIPerf). Turn k's request
// holds the whole history, so its target is turn k-1's target plus the
// assistant reply (wrap + its tokens) plus turn k's ISL: each user turn
// adds exactly its ISL, as AIPerf's linear model promises.
package compose

import (
	"context"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/islkit/islkit/internal/budget"
	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/wire"
)

// Composer makes conversations; Conversation is safe for concurrent use.
type Composer struct {
	opts  Options
	probe *records.Probe
	model *Model
	gen   *sizing.Gen
	comp  budget.Compensation
	// system is the shared system prompt text (bare count sysBare), cut
	// from the corpus at sysStart, identical for every conversation unless
	// a marker merging with it forces a per-conversation fix (searched
	// from the same place).
	system            string
	sysBare, sysStart int
	// corr0/corrN: how far the first render typically misses for the
	// first and later turns (found once on a calibration conversation), so
	// most turns hit their target on the first render.
	corr0, corrN int
	// groups are the shared prefixes of --prefix-groups.
	groups []prefixGroup
	// calMarker is the calibration marker's own count: a conversation's
	// marker may count a token or two more or less (its digest differs),
	// and the first guess accounts for that.
	calMarker int
	// context is the model's model_max_length, 0 when unknown.
	context int
	// pin is the model every conversation was composed for.
	pin *records.ModelPin
	// warnings found by New; tally counts what Run wrote.
	warnings []string
	tally    tally
	// images draws user turns' images (nil without --images).
	images *imageSource
}

// tally counts the turns Run wrote that a user should hear about.
type tally struct {
	turns                int
	unreachable          int
	firstUnreachable     *records.Unreachable
	overContext, largest int
}

// NewBenchmarkID mints a fresh benchmark id for the marker digest: 12 hex
// digits from crypto/rand, as AIPerf's uuid4().hex[:12]. Every compose run
// that is not given --benchmark-id gets its own, so a second run of the
// same pipeline sends markers a prefix-caching server has never seen (a
// seed-derived id repeated them, and the second run hit the cache).
func NewBenchmarkID() string {
	var b [6]byte
	if _, err := cryptorand.Read(b[:]); err != nil {
		panic("compose: crypto/rand: " + err.Error()) // never fails on supported platforms (Go 1.24+)
	}
	return hex.EncodeToString(b[:])
}

// benchmarkID is id, or a fresh one when it is "".
func benchmarkID(id string) string {
	if id == "" {
		return NewBenchmarkID()
	}
	return id
}

// New checks opts against the probe record, tokenizes the corpus and
// prepares the shared system prompt. corpusText "" means the embedded
// default.
func New(p *records.Probe, m *Model, corpusText string, opts Options) (*Composer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.BenchmarkID = benchmarkID(opts.BenchmarkID)
	opts.Workers = max(1, opts.Workers)
	hasSystem := opts.SharedSystemPromptLength > 0
	if p.Endpoint.OrChat() != opts.Endpoint.OrChat() {
		return nil, usagef("--endpoint %s disagrees with the probe record (%s): the overhead was measured for %s; rerun probe with --endpoint %s",
			opts.Endpoint.OrChat(), p.Endpoint.OrChat(), p.Endpoint.OrChat(), opts.Endpoint.OrChat())
	}
	opts.Endpoint = opts.Endpoint.OrChat()
	if p.CacheBust.IsSystem() && !hasSystem && !p.ChatTemplate.Applied && opts.Endpoint.Templated() {
		// With the template off and no system message a system target is
		// first_turn_* under another name; refuse rather than pretend.
		return nil, usagef("--cache-bust %s without --shared-system-prompt-length and with --apply-chat-template off changes nothing: the marker falls back to the first user turn; probe with --cache-bust first_turn_%s instead",
			p.CacheBust, strings.TrimPrefix(p.CacheBust.String(), "system_"))
	}
	c := &Composer{opts: opts, probe: p, model: m, context: ContextLength(m.Source)}
	var err error
	if c.pin, err = composedFor(p, m); err != nil {
		return nil, err
	}
	c.comp = budget.Compensation{
		MarkerTokens:  p.MarkerTokens,
		MarkerSamples: p.MarkerSamples,
		Landing:       cachebust.RouteEndpoint(opts.Endpoint, p.CacheBust, hasSystem),
		Template:      p.Overhead,
	}
	if first := c.turnTarget(&records.Conversation{SystemPrompt: systemIf(hasSystem, opts)}, 0, 0, opts.ISL); c.context > 0 && first > c.context && !opts.AllowOverContext {
		return nil, usagef("the first request would be %d tokens (--isl %d%s), above the model's context length %d (model_max_length of %s): a server refuses it; lower --isl, or give --allow-over-context to compose it anyway",
			first, opts.ISL, map[bool]string{true: " with the shared system prompt", false: ""}[hasSystem], c.context, m.Source.Name)
	}
	if hasSystem && m.Template != nil {
		// Templates such as Mistral v0.1's raise on a system message: the
		// server would reject every request, so refuse up front.
		req := &request.Request{Messages: []request.Message{{Role: "system", Content: "x"}, {Role: "user", Content: "y"}}}
		if _, err := serverprofile.PromptOf(orDefault(opts.Server), req, m.Template, m.Now); err != nil {
			return nil, usagef("--shared-system-prompt-length: the chat template of %s cannot take a system message (%v); drop the flag for this model", m.Source.Name, err)
		}
	}
	if opts.Images.PerTurn > 0 {
		if c.images, err = c.imageSource(); err != nil {
			return nil, err
		}
	}
	if corpusText == "" {
		if corpusText, err = corpus.Default(); err != nil {
			return nil, err
		}
	}
	if c.gen, err = corpusGen(corpusText, m, max(opts.Workers, runtime.GOMAXPROCS(0))); err != nil {
		return nil, err
	}
	ids := c.gen.IDs()
	if longest := max(opts.ISL, opts.OSL, opts.SharedSystemPromptLength); len(ids) < longest {
		c.warnings = append(c.warnings, fmt.Sprintf("the corpus is %d token(s), shorter than a %d-token prompt: prompts repeat it, which is not realistic text (a server may cache or compress it differently); give a longer --corpus", len(ids), longest))
	}
	if hasSystem {
		c.sysStart = rand.New(rand.NewPCG(opts.Seed, 0)).IntN(len(ids))
		c.sysBare = c.comp.SystemPromptLength(opts.SharedSystemPromptLength)
		if c.system, err = c.gen.Exact(c.sysStart, c.sysBare); err != nil {
			return nil, fmt.Errorf("shared system prompt: %w", err)
		}
	}
	if opts.PrefixGroups > 0 {
		if err := c.preparePrefixes(); err != nil {
			return nil, err
		}
	}
	if opts.Exact {
		if err := c.calibrate(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// systemIf is the system prompt a first request's target counts.
func systemIf(has bool, opts Options) *records.SystemPrompt {
	if !has {
		return nil
	}
	return &records.SystemPrompt{RequestedTokens: opts.SharedSystemPromptLength}
}

// Warnings returns what the user should read on stderr: a corpus too
// short for the prompts, and, once Run has written the conversations,
// how many turns are unreachable or outgrow the context length, and why.
func (c *Composer) Warnings() []string {
	out := append([]string(nil), c.warnings...)
	t := c.tally
	if t.unreachable > 0 {
		u := t.firstUnreachable
		out = append(out, fmt.Sprintf("%d of %d turn(s) are unreachable: %s (the first needs at least %d tokens, %d over its target); their records say by how much; raise --isl or drop the marker",
			t.unreachable, t.turns, u.Reason, u.MinISL, u.Short))
	}
	if t.overContext > 0 {
		out = append(out, fmt.Sprintf("%d of %d turn(s) have requests above the model's context length %d (model_max_length): the history outgrows it (largest request %d tokens); a server refuses them; lower --isl, --osl or --turns",
			t.overContext, t.turns, c.context, t.largest))
	}
	return out
}

func (c *Composer) count(conv *records.Conversation) {
	for _, t := range conv.Turns {
		c.tally.turns++
		if t.Unreachable != nil {
			if c.tally.unreachable == 0 {
				u := *t.Unreachable
				c.tally.firstUnreachable = &u
			}
			c.tally.unreachable++
		}
		if c.context > 0 && t.TargetISL > c.context {
			c.tally.overContext++
			c.tally.largest = max(c.tally.largest, t.TargetISL)
		}
	}
}

type corpusKey struct {
	tok  *tokenizer.Tokenizer
	text [32]byte
}

// corpora keeps the few most recently used tokenized corpora, so a process
// that composes several times with one model (tests, benchmarks) tokenizes
// the corpus once, while one that goes through many models holds at most
// corporaMax of them (an entry pins its tokenizer).
var corpora = corpusCache{max: corporaMax}

const corporaMax = 4

func corpusGen(text string, m *Model, workers int) (*sizing.Gen, error) {
	key := corpusKey{m.Tokenizer, sha256.Sum256([]byte(text))}
	if g := corpora.get(key); g != nil {
		return g, nil
	}
	g, err := sizing.New(m.Tokenizer, text, workers)
	if err != nil {
		return nil, err
	}
	corpora.put(key, g)
	return g, nil
}

// corpusCache is a small LRU: entries in use order, the most recent last.
// Two callers missing on one key at once both tokenize; the second put
// replaces the first.
type corpusCache struct {
	mu      sync.Mutex
	max     int
	entries []corpusEntry
}

type corpusEntry struct {
	key corpusKey
	gen *sizing.Gen
}

func (c *corpusCache) get(key corpusKey) *sizing.Gen {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key {
			c.entries = append(slices.Delete(c.entries, i, i+1), e)
			return e.gen
		}
	}
	return nil
}

func (c *corpusCache) put(key corpusKey, g *sizing.Gen) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(e corpusEntry) bool { return e.key == key })
	c.entries = append(c.entries, corpusEntry{key, g})
	if len(c.entries) > c.max {
		clear(c.entries[:len(c.entries)-c.max])
		c.entries = slices.Clone(c.entries[len(c.entries)-c.max:])
	}
}

// calibrate measures, on a throwaway two-turn conversation at the mean
// ISL, how far the compensated budget misses on the first render.
func (c *Composer) calibrate() error {
	cal := c.newConversation(-1)
	cal.Turns = make([]records.Turn, 2)
	if !c.opts.Endpoint.MultiTurn() {
		cal.Turns = cal.Turns[:1] // a completions prompt has no later turns
	}
	rng := rand.New(rand.NewPCG(c.opts.Seed^0x9e3779b97f4a7c15, 1))
	marker := wire.Marker(cal, 0)
	c.calMarker = c.markerCount(marker)
	if err := c.systemFor(cal, marker); err != nil {
		return err
	}
	target := 0
	for k := range cal.Turns {
		t := &cal.Turns[k]
		target = c.turnTarget(cal, k, target, c.opts.ISL)
		t.MaxTokens = c.opts.OSL
		text, err := c.gen.Exact(rng.IntN(len(c.gen.IDs())), c.comp.TurnBudget(c.opts.ISL, k == 0))
		if err != nil {
			return err
		}
		t.Text = text
		w, err := c.wireCount(cal, k, marker)
		if err != nil {
			return fmt.Errorf("rendering a request: %w", err)
		}
		if k == 0 {
			c.corr0 = w - target
		} else {
			// Turn 0's own miss is in this request too; real turns 0 are
			// exact, so only the rest is turn 1's.
			c.corrN = w - target - c.corr0
		}
		if t.Assistant, err = c.gen.Exact(rng.IntN(len(c.gen.IDs())), t.MaxTokens); err != nil {
			return err
		}
	}
	return nil
}

// markerCount is the marker's own token count when it lands on the first
// user turn (0 otherwise: a system marker is absorbed by the system
// prompt's exact length).
func (c *Composer) markerCount(marker string) int {
	if c.comp.Landing.Slot != cachebust.FirstUserTurn || marker == "" {
		return 0
	}
	return c.model.Tokenizer.Count(marker)
}

func (c *Composer) newConversation(i int) *records.Conversation {
	return &records.Conversation{
		Kind:          records.KindConversation,
		SchemaVersion: records.SchemaVersion,
		ID:            "conv-" + strconv.Itoa(i),
		Index:         i,
		BenchmarkID:   c.opts.BenchmarkID,
		Endpoint:      c.opts.Endpoint,
		CacheBust:     c.probe.CacheBust,
		Landing:       c.comp.Landing,
		Exact:         c.opts.Exact,
		Model:         c.opts.Model,
		Server:        string(orDefault(c.opts.Server)),
		ComposedFor:   c.pin,
	}
}

// composedFor is the pin of the model m, as it counts for probe record p:
// what every conversation records as composed_for.
func composedFor(p *records.Probe, m *Model) (*records.ModelPin, error) {
	pin, err := m.Pin(p.ChatTemplate.Applied)
	if err != nil {
		return nil, err
	}
	if v := m.Vision; v != nil && v.Dir != "" && (m.Source.Dir == "" || filepath.Clean(v.Dir) != filepath.Clean(m.Source.Dir)) {
		// send --exact must count the images with the same processor.
		pin.Processor = v.Dir
	}
	return &pin, nil
}

// LiveReserveMargin is the reserve a turn carries beyond the previous
// turn's max_tokens (--live). A live turn k must grow only by what reply
// k-1 fell short of its budget, since request k-1 was made exact: at most
// the whole budget (an empty reply), plus the few tokens a template's
// handling of the reply's edges or a recycle pass's marker can move; 32
// covers those with room. Turn 0 has no reply before it and carries the
// margin alone.
const LiveReserveMargin = 32

// liveReserve is the reserve of turn k, in tokens.
func liveReserve(conv *records.Conversation, k int) int {
	if k == 0 {
		return LiveReserveMargin
	}
	return conv.Turns[k-1].MaxTokens + LiveReserveMargin
}

// turnTarget is the wire ISL of turn k's whole request (see the package
// comment); prev is turn k-1's.
func (c *Composer) turnTarget(conv *records.Conversation, k, prev, isl int) int {
	if k == 0 {
		if conv.SystemPrompt != nil {
			return isl + c.comp.Template.Wrap + conv.SystemPrompt.RequestedTokens
		}
		return isl
	}
	return prev + c.comp.Template.Wrap + conv.Turns[k-1].MaxTokens + isl
}

// systemFor attaches the shared system prompt. In exact mode, when the
// marker lands on it, the marked prompt must count exactly the requested
// length; BPE merges with this conversation's digest can break that, and
// only then does this conversation get its own adjusted copy.
func (c *Composer) systemFor(conv *records.Conversation, marker string) error {
	if c.opts.SharedSystemPromptLength == 0 {
		return nil
	}
	sp := &records.SystemPrompt{Text: c.system, RequestedTokens: c.opts.SharedSystemPromptLength, BareTokens: c.sysBare}
	conv.SystemPrompt = sp
	if !c.opts.Exact || c.comp.Landing.Slot != cachebust.SharedSystemPrompt {
		return nil
	}
	want := sp.RequestedTokens
	count := func(s string) int { return c.model.Tokenizer.Count(cachebust.InjectString(conv.CacheBust, marker, s)) }
	got := count(sp.Text)
	if got == want || c.sysBare == 1 && got > want {
		return nil // exact, or the marker alone is already too long
	}
	eval := func(text string) (sizing.Attempt, error) {
		return sizing.Attempt{Text: text, Wire: count(text)}, nil
	}
	a, out, err := c.gen.Search(c.sysStart, c.sysBare-(got-want), want, eval)
	if err != nil {
		return fmt.Errorf("system prompt: %w", err)
	}
	if out != sizing.Exact {
		return fmt.Errorf("conversation %s: cannot make the marked system prompt exactly %d tokens (closest %d)", conv.ID, want, a.Wire)
	}
	sp.Text, sp.BareTokens = a.Text, c.model.Tokenizer.Count(a.Text)
	return nil
}

// wireCount is the ISL of turn k's request as send builds it, counted as
// the conversation's server profile counts its endpoint (compose's
// wireIDs: serverprofile.Render).
func (c *Composer) wireCount(conv *records.Conversation, k int, marker string) (int, error) {
	pr, err := prompt(c.model, conv, k, marker)
	if err != nil {
		return 0, err
	}
	return pr.Count(c.model.Tokenizer), nil
}

// Conversation builds conversation i; the result depends only on the
// options, the probe, the model, the corpus and i.
func (c *Composer) Conversation(i int) (*records.Conversation, error) {
	conv := c.newConversation(i)
	if len(c.groups) > 0 {
		g := i % len(c.groups)
		conv.PrefixGroup = &g
	}
	rng := rand.New(rand.NewPCG(c.opts.Seed, uint64(i)+1))
	// Images draw from their own stream: without them, every other draw
	// is what it always was.
	imageRNG := rand.New(rand.NewPCG(c.opts.Seed^imageSeed, uint64(i)+1))
	marker := wire.Marker(conv, 0)
	if err := c.systemFor(conv, marker); err != nil {
		return nil, err
	}
	// Draws are clamped to the flags' bounds: a mean plus six spreads must
	// not outgrow them.
	n := min(meanNormal(rng, c.opts.Turns, c.opts.TurnsStddev), MaxTurns)
	conv.Turns = make([]records.Turn, n)
	target := 0
	for k := range conv.Turns {
		t := &conv.Turns[k]
		t.Index = k
		isl := min(positiveNormal(rng, float64(c.opts.ISL), c.opts.ISLStddev), MaxLength)
		t.MaxTokens = min(positiveNormal(rng, float64(c.opts.OSL), c.opts.OSLStddev), MaxLength)
		userStart, replyStart := rng.IntN(len(c.gen.IDs())), rng.IntN(len(c.gen.IDs()))
		target = c.turnTarget(conv, k, target, isl)
		t.TargetISL = target
		guess := c.comp.TurnBudget(isl, k == 0)
		if c.images != nil {
			t.Images = c.images.turn(imageRNG)
			guess = max(1, guess-imageTokens(c.model.Vision.Processor, t.Images))
		}
		var err error
		if c.opts.Exact {
			corr := c.corrN
			if k == 0 {
				corr = c.corr0 + c.markerCount(marker) - c.calMarker
			}
			err = c.fit(conv, k, marker, target, guess-corr, userStart)
		} else {
			t.Text, err = c.gen.Exact(userStart, guess)
			if err == nil {
				t.BareTokens = guess
				if adj := adjustment(c.comp, k == 0); isl-adj < 1 {
					// The floor at 1 token overshoots by this much (by the
					// probe's averages; exact mode renders to know).
					short := adj + 1 - isl
					t.Unreachable = &records.Unreachable{MinISL: target + short, Short: short,
						Reason: "estimated from the probe: the template and marker alone cost more than the target"}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("conversation %s turn %d: %w", conv.ID, k, err)
		}
		if t.Assistant, err = c.gen.Exact(replyStart, t.MaxTokens); err != nil {
			return nil, fmt.Errorf("conversation %s turn %d reply: %w", conv.ID, k, err)
		}
	}
	if err := c.nameCacheBlocks(conv, marker); err != nil {
		return nil, err
	}
	return conv, nil
}

func adjustment(comp budget.Compensation, first bool) int {
	if first {
		return comp.FirstTurnAdjustment()
	}
	return comp.LaterTurnAdjustment()
}

// fit sets turn k's text so that its request counts exactly target tokens,
// or marks the turn unreachable when even a one-token text overshoots.
func (c *Composer) fit(conv *records.Conversation, k int, marker string, target, guess, start int) error {
	t := &conv.Turns[k]
	lead := c.lead(conv, k)
	if lead != "" {
		guess -= c.opts.PrefixLength
	}
	eval := func(text string) (sizing.Attempt, error) {
		t.Text = lead + text
		w, err := c.wireCount(conv, k, marker)
		if err != nil {
			return sizing.Attempt{}, fmt.Errorf("rendering the request: %w", err)
		}
		return sizing.Attempt{Text: text, Wire: w}, nil
	}
	a, out, err := c.gen.Search(start, guess, target, eval)
	if err != nil {
		return err
	}
	switch out {
	case sizing.Stuck:
		return fmt.Errorf("cannot reach the exact wire ISL %d with this tokenizer and template (closest below: %d)", target, a.Wire)
	case sizing.Unreachable:
		t.Unreachable = &records.Unreachable{MinISL: a.Wire, Short: a.Wire - target,
			Reason: "the chat template, history and marker alone exceed the target with a one-token text"}
	}
	t.Text = lead + a.Text
	t.BareTokens = c.model.Tokenizer.Count(t.Text)
	if c.opts.Live {
		t.Reserve = c.gen.Continuation(a.Start, a.Len, liveReserve(conv, k))
	}
	w := a.Wire
	t.WireISL = &w
	if k == 0 {
		return c.checkPrefix(conv, marker)
	}
	return nil
}

// Run writes conversations 0..n-1 to w in order, composing up to
// opts.Workers at a time; it stops at the first error or when ctx ends.
func (c *Composer) Run(ctx context.Context, w *jsonl.Writer) error {
	batch := c.opts.Workers * 8
	out := make([]*records.Conversation, batch)
	errs := make([]error, batch)
	for base := 0; base < c.opts.Conversations; base += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(batch, c.opts.Conversations-base)
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(c.opts.Workers, n) {
			wg.Go(func() {
				for j := range next {
					out[j], errs[j] = c.Conversation(base + j)
				}
			})
		}
		for j := range n {
			next <- j
		}
		close(next)
		wg.Wait()
		for j := range n {
			if errs[j] != nil {
				return errs[j]
			}
			c.count(out[j])
			if err := w.Encode(out[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// imageSeed sets the image draws' stream apart from the others.
const imageSeed = 0x696d61676573 // "images"

// imageSource checks that the model counts images and prepares the draws.
func (c *Composer) imageSource() (*imageSource, error) {
	if !c.opts.Endpoint.MultiTurn() {
		return nil, usagef("--images: a %s request has no user message to carry images; use --endpoint chat or responses", c.opts.Endpoint)
	}
	v := c.model.Vision
	if v == nil || v.Processor == nil {
		return nil, usagef("--images: %s has no image processing this tool reads (config.json with preprocessor_config.json / processor_config.json); give the model folder, or --processor DIR", c.model.Source.Name)
	}
	if err := v.Supported(); err != nil {
		return nil, usagef("--images: %v", err)
	}
	return newImageSource(c.opts.Images, v.Processor)
}
