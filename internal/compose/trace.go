package compose

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// TraceOptions configure compose --trace.
type TraceOptions struct {
	// BlockSize is the tokens per hash id (--block-size).
	BlockSize   int
	Seed        uint64
	BenchmarkID string
	Model       string
	Workers     int
	// CacheBlockSize is the prefix-cache block each request's cache
	// blocks are named in (--cache-block-size; 0: none named).
	CacheBlockSize int
	// OverContext says what to do with a row whose input_length is above
	// the model's context length ("" is skip).
	OverContext OverContext
	// Server: as Options.
	Server serverprofile.Profile
}

// Tracer turns Mooncake trace rows into single-turn conversations whose
// wire tokens follow the rows' hash ids.
//
// The wire request is header + content + tail: the template's text before
// the user content, the content, then the marker (suffix targets only) and
// the template's text after it. The content is the row's hash-id chain
// played block by block: block 0 holds B − header tokens, every later block
// B, so that block k of the content ends exactly at wire token (k+1)·B.
// Each block's text is a function of its chain (the ids up to and
// including it), cut from the corpus and sized in context, so requests
// whose ids agree up to k carry byte-identical text there. Every block but
// the first starts with a space followed by a non-space and ends with a
// non-space, a boundary where the pre-tokenizers of the models we know
// always cut: tokens then never merge across blocks, and identical text
// means identical token ids. Where the tokenizer proves every cut before a
// block (tokenizer.Seam), the request's counts are the sum of its parts'
// (countFromParts); elsewhere the whole request is encoded once at the end
// to check both claims (exact length, block token ids equal to the first
// request that carried the block), and a tokenizer that breaks them is an
// error, not a silent miss. The last block, partial, is sized so that with
// the tail the request counts exactly input_length.
type Tracer struct {
	opts   TraceOptions
	probe  *records.Probe
	model  *Model
	gen    *sizing.Gen
	target cachebust.Target
	// header and tail are the rendered request around the user content;
	// headerTokens is the header's count.
	header, tail string
	headerTokens int
	stride       int
	pin          *records.ModelPin
	over         overContext

	mu     sync.Mutex
	blocks map[chainKey]*traceBlock

	// encodeAll makes every text be counted whole and every request be
	// encoded (tests compare the two ways); fromParts counts the requests
	// that were not.
	encodeAll bool
	fromParts atomic.Int64
}

type chainKey [16]byte

// traceBlock is one hash-id chain's full block.
type traceBlock struct {
	start int // corpus token position its text is cut from
	once  sync.Once
	text  string // as placed in the content (leading space included)
	err   error
	// ids is the SHA-256 of the block's wire tokens, set by the first
	// request that verified it (under Tracer.mu).
	ids     [32]byte
	checked bool
	// seam: the tokenizer proves the cut before the text (after the block
	// before it) encodes as its sides apart (tokenizer.Seam); bare is the
	// first block's own count, set when the tokenizer proves seams.
	seam bool
	bare int
	// window is where the text was cut from (sizing.Attempt's Start, Len),
	// to assemble its ids from the window's parts (appendAttempt).
	windowStart, windowLen int
}

const sentinel = "ISLKIT7f3a9sentinel"

// NewTracer prepares a tracer for probe p (its cache-bust target decides
// the marker: prefix targets are refused, since a marker before the first
// block would make every prompt's first block unique).
func NewTracer(p *records.Probe, m *Model, corpusText string, opts TraceOptions) (*Tracer, error) {
	if opts.BlockSize < 1 {
		return nil, usagef("--block-size must be at least 1 token (got %d)", opts.BlockSize)
	}
	if p.Endpoint.OrChat() != endpoint.Chat {
		return nil, usagef("--trace composes chat requests only (the probe record is for --endpoint %s); probe with --endpoint chat", p.Endpoint)
	}
	opts.BenchmarkID = benchmarkID(opts.BenchmarkID)
	opts.Workers = max(1, opts.Workers)
	landing := cachebust.Route(p.CacheBust, false)
	if landing.Slot != cachebust.NoSlot && landing.Prefix {
		return nil, usagef("--trace with cache-bust target %s: the marker would open every prompt, before the blocks the trace says are shared, so no prefix could ever be cached; probe with --cache-bust first_turn_suffix (the marker then sits in each request's last block) or none", p.CacheBust)
	}
	t := &Tracer{opts: opts, probe: p, model: m, target: p.CacheBust, blocks: map[chainKey]*traceBlock{}}
	var err error
	if t.pin, err = composedFor(p, m); err != nil {
		return nil, err
	}
	mode, err := validOverContext(opts.OverContext)
	if err != nil {
		return nil, err
	}
	t.over = overContext{context: ContextLength(m.Source), model: m.Source.Name, mode: mode}
	if corpusText == "" {
		if corpusText, err = corpus.Default(); err != nil {
			return nil, err
		}
	}
	if t.gen, err = corpusGen(corpusText, m, max(opts.Workers, runtime.GOMAXPROCS(0))); err != nil {
		return nil, err
	}
	t.stride = coprimeStride(len(t.gen.IDs()))
	if t.header, t.tail, err = splitTemplate(m, t.opts.Server); err != nil {
		return nil, err
	}
	t.headerTokens = m.Tokenizer.Count(t.header)
	if t.headerTokens >= opts.BlockSize {
		return nil, usagef("--block-size %d: the chat template's header alone costs %d tokens, so the first block would hold no content", opts.BlockSize, t.headerTokens)
	}
	return t, nil
}

// coprimeStride is a step near n/φ that is coprime with n: the first n
// blocks get distinct corpus starts, spread over the corpus.
func coprimeStride(n int) int {
	s := max(1, int(float64(n)*0.6180339887))
	for gcd(s, n) != 1 {
		s++
	}
	return s
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// plan assigns every chain its key and, on first appearance in file
// order, its corpus start, so that output does not depend on workers.
func (t *Tracer) plan(rows []workload.TraceRow) [][]chainKey {
	keys := make([][]chainKey, len(rows))
	seed := make([]byte, 8)
	binary.LittleEndian.PutUint64(seed, t.opts.Seed)
	n := 0
	for i, r := range rows {
		keys[i] = make([]chainKey, len(r.HashIDs))
		var parent chainKey
		for j, id := range r.HashIDs {
			h := sha256.New()
			h.Write(seed)
			h.Write(parent[:])
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(id))
			h.Write(b[:])
			var k chainKey
			copy(k[:], h.Sum(nil))
			keys[i][j] = k
			if _, ok := t.blocks[k]; !ok {
				t.blocks[k] = &traceBlock{start: (n * t.stride) % len(t.gen.IDs())}
				n++
			}
			parent = k
		}
	}
	return keys
}

// lead is what a block's text starts with: nothing for the first (it
// follows the header), one space for the others (the boundary the
// pre-tokenizer cuts at).
func lead(j int) string {
	if j == 0 {
		return ""
	}
	return " "
}

// anchor is the context a block's count is taken in: the header for the
// first block, else the last word of the block before (a cut boundary, so
// the count of what follows does not depend on more of it).
func (t *Tracer) anchor(j int, prev string) string {
	if j == 0 {
		return t.header
	}
	if i := strings.LastIndexByte(prev, ' '); i >= 0 && i+1 < len(prev) {
		return prev[i+1:]
	}
	return prev
}

// counterAfter counts texts in the context of anchor a (a's own count
// taken once: a search counts many texts after one anchor).
func (t *Tracer) counterAfter(a string) (after func(s string) int, n int) {
	n = t.model.Tokenizer.Count(a)
	return func(s string) int { return t.model.Tokenizer.Count(a+s) - n }, n
}

// windowEval is eval for a corpus window (anchor, lead, the window's text
// trimmed as eval trims it, tail; counted after the anchor, whose count is
// anchorCount, plus base)
// that counts only what it must: where the tokenizer proves the seam
// before a part of the text (tokenizer.Seam), the count is the sum of
// the counts on either side, and a part that is a corpus piece verbatim
// has its count from the corpus's ids, so only the decoded ends of the
// window, the anchor and the tail are encoded. Elsewhere it is eval.
func (t *Tracer) windowEval(anchor string, anchorCount int, lead, tail string, base int, eval func(string) (sizing.Attempt, error)) sizing.WindowEval {
	tok := t.model.Tokenizer
	if !tok.ProvesSeams() || t.encodeAll {
		return nil
	}
	var items []sizing.Part
	return func(parts []sizing.Part, text string) (sizing.Attempt, error) {
		trimmed := strings.TrimRight(text, " ")
		items = append(items[:0], sizing.Part{Text: anchor + lead, Count: -1})
		n := len(anchor) + len(lead) + len(tail)
		for i, p := range parts {
			if i == len(parts)-1 {
				if tr := strings.TrimRight(p.Text, " "); tr != p.Text {
					p = sizing.Part{Text: tr, Count: -1}
				}
			}
			if p.Text == "" {
				return eval(text)
			}
			items = append(items, p)
			n += len(p.Text)
		}
		if tail != "" {
			items = append(items, sizing.Part{Text: tail, Count: -1})
		}
		if n > tokenizer.MaxWhole || n-len(anchor)-len(lead)-len(tail) != len(trimmed) {
			return eval(text)
		}
		for _, it := range items {
			if !utf8.ValidString(it.Text) {
				return eval(text)
			}
		}
		return sizing.Attempt{Text: trimmed, Wire: base + countJoined(tok, items) - anchorCount}, nil
	}
}

// countAttempt is Count(lead + a.Text), counted from the parts of the
// window a was cut from (countJoined) where a's text is that window's,
// trimmed as the evaluations trim it (not padded).
func (t *Tracer) countAttempt(lead string, a sizing.Attempt) int {
	if items := t.attemptItems(lead, a, ""); items != nil {
		return countJoined(t.model.Tokenizer, items)
	}
	return t.model.Tokenizer.Count(lead + a.Text)
}

// appendAttempt appends Encode(lead + a.Text + tail) to dst, assembled
// from the parts of a's window as countAttempt counts them.
func (t *Tracer) appendAttempt(dst []int, lead string, a sizing.Attempt, tail string) []int {
	if items := t.attemptItems(lead, a, tail); items != nil {
		return appendJoined(t.model.Tokenizer, items, dst)
	}
	return t.model.Tokenizer.AppendEncode(dst, lead+a.Text+tail)
}

// attemptItems is lead + a.Text + tail as the parts of a's window, lead
// and tail joined to the first and last; nil where a's text is not its
// window's trimmed, or seams cannot be proved.
func (t *Tracer) attemptItems(lead string, a sizing.Attempt, tail string) []sizing.Part {
	tok := t.model.Tokenizer
	text := lead + a.Text + tail
	if !tok.ProvesSeams() || t.encodeAll || a.Len < 1 || len(text) > tokenizer.MaxWhole {
		return nil
	}
	parts := t.gen.Parts(nil, a.Start, a.Len)
	if lead != "" {
		parts[0] = sizing.Part{Text: lead + parts[0].Text, Count: -1}
	}
	last := &parts[len(parts)-1]
	if tr := strings.TrimRight(last.Text, " "); tr != last.Text {
		*last = sizing.Part{Text: tr, Count: -1}
	}
	if tail != "" {
		parts = append(parts, sizing.Part{Text: tail, Count: -1})
	}
	n := 0
	for _, p := range parts {
		if !strings.HasPrefix(text[n:], p.Text) || !utf8.ValidString(p.Text) {
			return nil
		}
		n += len(p.Text)
	}
	if n != len(text) {
		return nil
	}
	return parts
}

// appendJoined is countJoined appending the ids: a run of one item with
// ids is those ids, any other run is encoded.
func appendJoined(tok *tokenizer.Tokenizer, items []sizing.Part, dst []int) []int {
	run := 0
	var sb strings.Builder
	for i := 1; i <= len(items); i++ {
		if i < len(items) && !tok.Seam(items[i-1].Text, items[i].Text) {
			continue
		}
		if i-run == 1 && items[run].Count >= 0 && len(items[run].IDs) == items[run].Count {
			dst = append(dst, items[run].IDs...)
		} else {
			sb.Reset()
			for _, it := range items[run:i] {
				sb.WriteString(it.Text)
			}
			dst = tok.AppendEncode(dst, sb.String())
		}
		run = i
	}
	return dst
}

// countJoined is the count of the items' texts joined: the items are cut
// into runs at the seams the tokenizer proves (tokenizer.Seam; before the
// last item, which ends the text, tokenizer.SeamEnd), and each run is
// counted on its own, a run of one item of known count by that count.
func countJoined(tok *tokenizer.Tokenizer, items []sizing.Part) int {
	total, run := 0, 0
	var sb strings.Builder
	for i := 1; i <= len(items); i++ {
		if i < len(items)-1 && !tok.Seam(items[i-1].Text, items[i].Text) {
			continue
		}
		if i == len(items)-1 && !tok.SeamEnd(items[i-1].Text, items[i].Text) {
			continue
		}
		if i-run == 1 && items[run].Count >= 0 {
			total += items[run].Count
		} else {
			sb.Reset()
			for _, it := range items[run:i] {
				sb.WriteString(it.Text)
			}
			total += tok.Count(sb.String())
		}
		run = i
	}
	return total
}

// blockCap is block j's content tokens.
func (t *Tracer) blockCap(j int) int {
	if j == 0 {
		return t.opts.BlockSize - t.headerTokens
	}
	return t.opts.BlockSize
}

// block returns block j's text (computed once per chain).
func (t *Tracer) block(b *traceBlock, j int, prev string) (string, error) {
	b.once.Do(func() {
		a := t.anchor(j, prev)
		after, anchorCount := t.counterAfter(a)
		l, want := lead(j), t.blockCap(j)
		eval := func(text string) (sizing.Attempt, error) {
			text = strings.TrimRight(text, " ")
			return sizing.Attempt{Text: text, Wire: after(l + text)}, nil
		}
		got, out, err := t.gen.SearchWindows(b.start, want, want, eval, t.windowEval(a, anchorCount, l, "", 0, eval))
		switch {
		case err != nil:
			b.err = err
		case out != sizing.Exact:
			b.err = fmt.Errorf("cannot cut a block of exactly %d tokens (closest %d)", want, got.Wire)
		default:
			b.text = l + strings.TrimRight(got.Text, " ")
			b.windowStart, b.windowLen = got.Start, got.Len
			tok := t.model.Tokenizer
			if j > 0 {
				b.seam = tok.Seam(prev, b.text)
			} else if tok.ProvesSeams() {
				b.bare = t.countAttempt(l, got)
			}
		}
	})
	return b.text, b.err
}

// Run composes every row and writes the conversations to w in file order.
func (t *Tracer) Run(ctx context.Context, w *jsonl.Writer, rows []workload.TraceRow) error {
	keys := t.plan(rows)
	return runOrdered(ctx, w, len(rows), t.opts.Workers, func(i int) (*records.Conversation, error) {
		return t.Conversation(i, rows[i], keys[i])
	})
}

// OverContext lists, by line, the rows whose input_length is above the
// model's context length: left out, or kept with --over-context keep.
func (t *Tracer) OverContext() []workload.Skipped { return t.over.list() }

// Conversation composes row r as conversation i; nil when the row is
// above the model's context length and left out (OverContext).
func (t *Tracer) Conversation(i int, r workload.TraceRow, keys []chainKey) (*records.Conversation, error) {
	if _, skip := t.over.above(r.Line, false, 0, r.InputLength); skip {
		return nil, nil
	}
	conv := &records.Conversation{
		Kind:           records.KindConversation,
		SchemaVersion:  records.SchemaVersion,
		ID:             "conv-" + strconv.Itoa(i),
		Index:          i,
		BenchmarkID:    t.opts.BenchmarkID,
		CacheBust:      t.target,
		Landing:        cachebust.Route(t.target, false),
		Exact:          true,
		Model:          t.opts.Model,
		Server:         string(orDefault(t.opts.Server)),
		CacheBlockSize: t.opts.CacheBlockSize,
		Trace:          &records.TraceRef{Line: r.Line, TimestampMs: r.Timestamp, HashIDs: r.HashIDs, BlockSize: t.opts.BlockSize},
		Turns:          []records.Turn{{TargetISL: r.InputLength, MaxTokens: r.OutputLength}},
		ComposedFor:    t.pin,
	}
	fail := func(err error) (*records.Conversation, error) {
		return nil, fmt.Errorf("trace line %d: %w", r.Line, err)
	}
	marker := wire.Marker(conv, 0)
	tail := t.tail
	if marker != "" {
		tail = marker + t.tail // a suffix marker (prefix targets are refused)
	}
	tailEst := t.model.Tokenizer.Count(tail)
	var content strings.Builder
	// Five bytes a token is above the corpus's average: no regrowth.
	content.Grow(r.InputLength * 5)
	used := t.headerTokens // wire tokens so far
	prev := ""
	full := 0
	n := len(r.HashIDs)
	for j := 0; j < n; j++ {
		c := t.blockCap(j)
		if j == n-1 || r.InputLength-used-c < tailEst+1 {
			break
		}
		text, err := t.block(t.blocks[keys[j]], j, prev)
		if err != nil {
			return fail(fmt.Errorf("block %d: %w", j, err))
		}
		content.WriteString(text)
		used += c
		prev = text
		full++
	}
	// The last part: cut from the next chain's corpus start, so that rows
	// ending in the same chain share as much of it as their lengths allow.
	j := full
	start := t.blocks[keys[j]].start
	a := t.anchor(j, prev)
	after, anchorCount := t.counterAfter(a)
	l := lead(j)
	eval := func(text string) (sizing.Attempt, error) {
		text = strings.TrimRight(text, " ")
		return sizing.Attempt{Text: text, Wire: used + after(l+text+tail)}, nil
	}
	got, out, err := t.gen.SearchWindows(start, r.InputLength-used-tailEst, r.InputLength, eval, t.windowEval(a, anchorCount, l, tail, used, eval))
	if err != nil {
		return fail(err)
	}
	if out == sizing.Stuck {
		return fail(fmt.Errorf("cannot reach the exact wire ISL %d with this tokenizer and template (closest below: %d)", r.InputLength, got.Wire))
	}
	content.WriteString(l + got.Text)
	turn := &conv.Turns[0]
	turn.Text = content.String()
	conv.Trace.FullBlocks = full
	pw, pbare, ok, err := t.countFromParts(conv, marker, tail, keys[:full], prev, l, got)
	if err != nil {
		return fail(err)
	}
	var chain string
	if ok && t.opts.CacheBlockSize > 0 {
		buf := idsBuffers.Get().(*[]int)
		ids := t.assembleIDs((*buf)[:0], keys[:full], l, got, tail)
		if ok = len(ids) == pw; ok {
			chain = prefixcache.Chain(ids, t.opts.CacheBlockSize)
		}
		*buf = ids
		idsBuffers.Put(buf)
	}
	if ok {
		t.fromParts.Add(1)
		turn.BareTokens, turn.WireISL, turn.CacheBlocks = pbare, &pw, chain
		if out == sizing.Unreachable {
			turn.Unreachable = &records.Unreachable{MinISL: pw, Short: pw - r.InputLength,
				Reason: "the chat template and marker alone exceed input_length with a one-token text"}
		}
		return conv, nil
	}
	buf := idsBuffers.Get().(*[]int)
	defer idsBuffers.Put(buf)
	ids, bare, err := t.wireAndBare((*buf)[:0], conv, marker)
	if err != nil {
		return fail(err)
	}
	*buf = ids // the ids are hashed below and not kept: the buffer is reused
	turn.BareTokens = bare
	w := len(ids)
	turn.WireISL = &w
	if out == sizing.Unreachable {
		turn.Unreachable = &records.Unreachable{MinISL: w, Short: w - r.InputLength,
			Reason: "the chat template and marker alone exceed input_length with a one-token text"}
	} else if w != r.InputLength {
		return fail(fmt.Errorf("the request encodes to %d tokens where its parts add up to %d: the tokenizer merges across the template or a block boundary", w, r.InputLength))
	}
	if err := t.checkBlocks(ids, keys[:full], r.Line); err != nil {
		return fail(err)
	}
	if t.opts.CacheBlockSize > 0 {
		turn.CacheBlocks = prefixcache.Chain(ids, t.opts.CacheBlockSize)
	}
	return conv, nil
}

// countFromParts is the request's wire count and its text's bare count, taken
// from the counts its parts were sized by, where the tokenizer proves that
// the request encodes as those parts apart: the first block after the
// header, each later block, and the last part with the tail. Each was
// counted after the last word of the block before it (counterAfter), and
// every cut before a block or the last part is a seam the tokenizer proves
// from the cut's two sides alone (tokenizer.Seam), so the same cut holds
// in the request, in the text alone and in the context the part was
// counted in. The request must be the header, the text and the tail, as
// the parts were sized for, encoded whole. ok is false where any of that
// is not so; the request is then encoded.
func (t *Tracer) countFromParts(conv *records.Conversation, marker, tail string, keys []chainKey, prev, lead string, got sizing.Attempt) (w, bare int, ok bool, err error) {
	tok := t.model.Tokenizer
	last, wire := lead+got.Text, got.Wire
	if !tok.ProvesSeams() || t.encodeAll {
		return 0, 0, false, nil
	}
	for j := 1; j < len(keys); j++ {
		if !t.blocks[keys[j]].seam {
			return 0, 0, false, nil
		}
	}
	if len(keys) > 0 && !tok.Seam(prev, last) {
		return 0, 0, false, nil
	}
	pr, err := prompt(t.model, conv, 0, marker)
	if err != nil {
		return 0, 0, false, refused(err)
	}
	text := conv.Turns[0].Text
	rendered := string(pr.Text)
	if t.model.Template == nil || pr.AddSpecialTokens || len(pr.Bare) > 0 || len(pr.Cuts) > 0 || len(pr.Fixed) > 0 ||
		len(rendered) != len(t.header)+len(text)+len(tail) || len(rendered) > tokenizer.MaxWhole ||
		!strings.HasPrefix(rendered, t.header) || rendered[len(t.header):len(t.header)+len(text)] != text ||
		!strings.HasSuffix(rendered, tail) || !utf8.ValidString(rendered) {
		return 0, 0, false, nil
	}
	if len(keys) == 0 {
		return wire, t.countAttempt(lead, got), true, nil
	}
	bare = t.blocks[keys[0]].bare + (len(keys)-1)*t.opts.BlockSize + t.countAttempt(lead, got)
	return wire, bare, true, nil
}

// assembleIDs appends the request's ids to dst from its parts' (where
// countFromParts proved the seams between them): the header with the
// first block, each later block, and the last part with the tail, each
// assembled from its window's parts (appendAttempt). With no full block
// the last part follows the header.
func (t *Tracer) assembleIDs(dst []int, keys []chainKey, lastLead string, got sizing.Attempt, tail string) []int {
	head := t.header
	for j, k := range keys {
		b := t.blocks[k]
		l := lead(j)
		dst = t.appendAttempt(dst, head+l, sizing.Attempt{Text: b.text[len(l):], Start: b.windowStart, Len: b.windowLen}, "")
		head = ""
	}
	return t.appendAttempt(dst, head+lastLead, got, tail)
}

// wireIDs is the request's wire tokens, built as send builds it.
func (t *Tracer) wireIDs(conv *records.Conversation, marker string) ([]int, error) {
	ids, _, err := wireIDs(t.model, conv, 0, marker)
	return ids, err
}

// idsBuffers hold the wire ids of one request while Conversation checks
// them: appending into a reused buffer instead of a fresh slice saves
// about a third of the encoding's time.
var idsBuffers = sync.Pool{New: func() any { return new([]int) }}

// wireAndBare is wireIDs, appended to dst, and the turn's bare count,
// Count(turn.Text). The bare count is read off the wire encoding where the
// tokenizer proves it equals the text's own count
// (tokenizer.AppendEncodeSpan: the text starts a pre-token there and its
// end changes no piece before its last word), which saves encoding the
// text a second time; elsewhere it is counted.
func (t *Tracer) wireAndBare(dst []int, conv *records.Conversation, marker string) ([]int, int, error) {
	text := conv.Turns[0].Text
	pr, err := prompt(t.model, conv, 0, marker)
	if err != nil {
		return nil, 0, refused(err)
	}
	if t.model.Template == nil || pr.AddSpecialTokens || len(pr.Bare) > 0 {
		return pr.IDs(t.model.Tokenizer), t.model.Tokenizer.Count(text), nil
	}
	rendered := string(pr.Text)
	// Any place the text sits in the request will do: the span's count is
	// the count of the same string.
	p := len(t.header)
	if !strings.HasPrefix(rendered, t.header) || !strings.HasPrefix(rendered[p:], text) {
		p = strings.Index(rendered, text)
	}
	if p < 0 || text == "" {
		return t.model.Tokenizer.Encode(rendered), t.model.Tokenizer.Count(text), nil
	}
	ids, bare, ok := t.model.Tokenizer.AppendEncodeSpan(dst, rendered, p, p+len(text))
	if !ok {
		bare = t.model.Tokenizer.Count(text)
	}
	return ids, bare, nil
}

// checkBlocks requires every full block's wire tokens to be those of the
// first request that carried it.
func (t *Tracer) checkBlocks(ids []int, keys []chainKey, line int) error {
	bs := t.opts.BlockSize
	t.mu.Lock()
	defer t.mu.Unlock()
	for j, k := range keys {
		b := t.blocks[k]
		sum := idsSum(ids[j*bs : (j+1)*bs])
		if !b.checked {
			b.ids, b.checked = sum, true
		} else if sum != b.ids {
			return fmt.Errorf("block %d: wire tokens %d..%d differ from those of an earlier row sharing the block: the tokenizer merged across a block boundary", j, j*bs, (j+1)*bs-1)
		}
	}
	return nil
}

func idsSum(ids []int) [32]byte {
	// Hashed through a small buffer: a block's bytes are not kept.
	h := sha256.New()
	var b [1024]byte
	for len(ids) > 0 {
		n := min(len(ids), len(b)/4)
		for i, id := range ids[:n] {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(id))
		}
		h.Write(b[:4*n])
		ids = ids[n:]
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
