// Package exact is send --exact's sizing: each live request resized to
// count exactly its target_isl as the server profile renders it
// (serverprofile.Render) against the real replies of its history. Fit
// sizes one request (a fitter holds its search's state, the last request
// rendered among it); the conversations' model and server are checked
// first (ComposedFor, ServerFor, LoadModel).
package exact

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/wire"
)

// ComposedFor is the model every conversation was composed for with
// --live, which send --exact must count with; conversations composed
// without --live (no reserve text), or for two models, are refused.
func ComposedFor(convs []records.Conversation) (*records.ModelPin, error) {
	var first *records.ModelPin
	for i := range convs {
		c := &convs[i]
		f := c.ComposedFor
		switch {
		case c.Trace != nil:
			return nil, fmt.Errorf("conversation %s replays trace line %d (compose --trace), which send --exact cannot resize (compose --live is for synthetic conversations): send it without --exact", c.ID, c.Trace.Line)
		case f == nil || !hasReserve(c):
			return nil, fmt.Errorf("conversation %s does not carry reserve text (nor, before compose wrote it on every conversation, the model it was composed for): compose it with --live (synthetic or --dataset conversations; not --trace) to send it with --exact", c.ID)
		case first == nil:
			first = f
		case *f != *first:
			return nil, fmt.Errorf("conversation %s was composed for %s (tokenizer sha256 %s), conversation %s for %s (%s): send --exact counts with one model; send them separately",
				c.ID, f.Tokenizer, f.TokenizerSHA256, convs[0].ID, first.Tokenizer, first.TokenizerSHA256)
		}
	}
	return first, nil
}

// ServerFor is the server profile send --exact counts convs with: want
// (send --server) when given, else the one the conversations were sized
// for (compose --server, records.Conversation.Server; absent: vllm). Their
// targets are that profile's counts, so conversations sized for another
// profile than want, or for two profiles, are refused (a usage error).
func ServerFor(convs []records.Conversation, want string) (serverprofile.Profile, error) {
	got := ""
	for i := range convs {
		c := &convs[i]
		s := c.Server
		if s == "" {
			s = string(serverprofile.Default)
		}
		switch {
		case want != "" && s != want:
			return "", fmt.Errorf("conversation %s was composed for --server %s (its targets are %s's counts), not %s: send it with --server %s (or leave --server out), or compose it again with --server %s", c.ID, s, s, want, s, want)
		case got == "":
			got = s
		case s != got:
			return "", fmt.Errorf("conversation %s was composed for --server %s but an earlier one for %s: send --exact counts as one server; send them separately", c.ID, s, got)
		}
	}
	if want != "" {
		got = want
	}
	return serverprofile.Parse(got)
}

// hasReserve tells a conversation composed with --live: each of its turns
// carries the corpus text a resize grows it with.
func hasReserve(c *records.Conversation) bool {
	for _, t := range c.Turns {
		if t.Reserve != "" {
			return true
		}
	}
	return false
}

// LoadModel loads the model pin names for send --exact
// (model.LoadPinned): o's flags default to the pin's tokenizer, chat
// template and clock, and a model other than the pin's is a usage error.
// Its image processing is read from processor (send --processor), else
// the pin's (compose --processor), else the model's folder (Vision).
func LoadModel(pin records.ModelPin, o model.Options, processor string) (*model.Model, error) {
	m, err := model.LoadPinned(pin, o, PinNamed, PinFix(pin))
	if err != nil {
		return nil, err
	}
	if m.Vision, err = Vision(m.Source, pin, processor); err != nil {
		return nil, err
	}
	return m, nil
}

// Vision is the image processing send --exact counts the images of the
// conversations with, as compose did: from processor, else the folder
// the pin names (compose --processor), else the model's own folder (nil
// for a text-only model). The server's image limit is not applied: the
// server refuses what it refuses, and send records it. A processor folder
// named but absent is a usage error (the images would not be counted).
func Vision(src *modelsrc.Source, pin records.ModelPin, processor string) (*serverprofile.Vision, error) {
	named := "--processor"
	if processor == "" && pin.Processor != "" {
		processor, named = pin.Processor, PinNamed+"' processor (compose --processor)"
	}
	if processor == "" {
		return serverprofile.LoadVision(src.Dir, -1), nil
	}
	if fi, err := os.Stat(processor); err != nil || !fi.IsDir() {
		return nil, cli.Usagef("%s %s: not a folder here; give --processor DIR, the image processing compose counted the images with", named, processor)
	}
	return serverprofile.LoadVision(processor, -1), nil
}

// PinNamed names the pin send --exact checks its model against.
const PinNamed = "the conversations"

// PinFix says what to do when send --exact's model is not pin's.
func PinFix(pin records.ModelPin) string {
	return "send --exact must count with the model compose used (give --tokenizer " + pin.Tokenizer + " and the --chat-template compose used, or leave them out)"
}

// Sizer makes every live request of send --exact count exactly its
// target_isl as the server renders it, against the real replies of its
// history. It is safe for concurrent use.
type Sizer struct {
	m       *model.Model
	profile serverprofile.Profile
	// bare: the conversations were composed without the chat template,
	// so their targets are bare counts (the message texts joined by one
	// space, as compose counted them).
	bare bool
	// renders and requests count the whole-request renders and the
	// requests sized (Renders).
	renders, requests atomic.Int64
}

// Renders is how many times the requests sized so far were rendered and
// counted whole, and how many requests that was for: the cost of
// --exact, one render per request when the first guess holds.
func (z *Sizer) Renders() (renders, requests int64) {
	return z.renders.Load(), z.requests.Load()
}

// NewSizer counts with m, the model the conversations were composed for
// (LoadModel), as profile renders requests. Without a template (the
// conversations were composed bare, or the model has none) the targets are
// bare counts.
func NewSizer(m *model.Model, profile serverprofile.Profile) *Sizer {
	return &Sizer{m: m, profile: profile, bare: m.Template == nil}
}

// Count is the request's ISL as the server profile counts body
// (serverprofile.RenderVision: its images too, by the model's
// processor): rendered through the template, or the bare
// count when the conversations were composed without one (their targets
// are bare counts, the message texts joined by one space, as compose
// counted them); a completions prompt as the server encodes it, special
// tokens included (compose's target counts them too).
func (z *Sizer) Count(body []byte) (int, error) {
	z.renders.Add(1)
	ex, err := extract.Body(body)
	if err != nil {
		return 0, err
	}
	var t *chat.Template
	if !z.bare {
		t = z.m.Template
	}
	pr, err := serverprofile.RenderVision(z.profile, ex, t, z.m.Vision, z.m.Now, nil)
	if err != nil {
		return 0, err
	}
	return pr.Count(z.m.Tokenizer), nil
}

// Request is a built request: its body is what the server counts.
type Request interface{ RequestBody() []byte }

// Builder builds the request of turn `turn` of c on recycle pass `pass`
// with the replies so far (send's Builder).
type Builder[R Request] interface {
	Build(c *records.Conversation, turn, pass int, replies []string) (R, error)
}

// Sized is a request made exact, with what its record says about it.
type Sized[R Request] struct {
	Built R
	Wire  int // its count
	// ResizedFrom/To are the bare tokens before and after, nil when the
	// text went out as compose wrote it.
	ResizedFrom, ResizedTo *int
	Unreachable            *records.Unreachable
	// resizedText is the text whose count becomes ResizedTo, taken by
	// Finish after the request went out (it is not needed to send it).
	resizedText string
}

// Finish counts the resized text for the record (resized_to) with z's
// tokenizer.
func (s *Sized[R]) Finish(z *Sizer) {
	if s.ResizedFrom != nil && s.ResizedTo == nil {
		n := z.m.Tokenizer.Count(s.resizedText)
		s.ResizedTo = &n
	}
}

// Session carries what the previous request of a session taught the
// next one's first guess.
type Session struct {
	prevWire int // the previous request's count; 0 before the first
}

// fitter is the search for one request's text: the request it rendered
// last (the render cache: a text found again need not be rendered again)
// and the candidate it estimated last.
type fitter[R Request] struct {
	z       *Sizer
	b       Builder[R]
	c       *records.Conversation
	turn    int
	pass    int
	replies []string
	// last is the request rendered and counted last, from lastText;
	// rendered says there is one.
	last     Sized[R]
	lastText string
	rendered bool
	// base is the count the estimates step from; estText the candidate
	// estimated last, want its estimate.
	base    int
	estText string
	want    int
}

// render builds the request with text as the turn's text and counts it.
func (f *fitter[R]) render(text string) (sizing.Attempt, error) {
	f.c.Turns[f.turn].Text = text
	built, err := f.b.Build(f.c, f.turn, f.pass, f.replies)
	if err != nil {
		return sizing.Attempt{}, err
	}
	n, err := f.z.Count(built.RequestBody())
	if err != nil {
		return sizing.Attempt{}, fmt.Errorf("conversation %s turn %d: counting the request: %w", f.c.ID, f.turn, err)
	}
	f.last, f.lastText, f.rendered = Sized[R]{Built: built, Wire: n}, text, true
	return sizing.Attempt{Text: text, Wire: n}, nil
}

// ensure makes text's request the last rendered, rendering it unless it
// already is.
func (f *fitter[R]) ensure(text string) error {
	if f.rendered && f.lastText == text {
		return nil
	}
	_, err := f.render(text)
	return err
}

// estimate counts a candidate from base by the tokens of its changed end
// alone (textStep), without a render.
func (f *fitter[R]) estimate(orig, text string) sizing.Attempt {
	f.estText, f.want = text, f.base+f.z.textStep(f.c, f.turn, f.pass, orig, text)
	return sizing.Attempt{Text: text, Wire: f.want}
}

// Fit sizes turn `turn` of c (the session's own copy, whose earlier turns
// hold the texts that were sent) against replies, sets c.Turns[turn].Text
// to the text sent, and builds the request with b. orig is compose's
// turn; st the session's state, carried from one request to the next.
//
// The first guess needs no render: the request differs from the previous
// one (which was counted) by the previous reply, the wraps and this
// turn's text, as in compose's dry run, except that the reply is the
// server's (counted, reply-sized) rather than the synthetic one; a first
// turn differs from compose's by the marker of its recycle pass. When
// that count is not the target, sizing.Search looks for the text as
// compose's exact mode does, but counts each candidate from it by the
// tokens of the text's changed end alone (textStep). One render and count
// of the request then confirms the text found, usually at once;
// otherwise the search is done again with a render per candidate.
func Fit[R Request](z *Sizer, b Builder[R], c *records.Conversation, orig *records.Turn, turn, pass int, replies []string, st *Session) (Sized[R], error) {
	z.requests.Add(1)
	f := fitter[R]{z: z, b: b, c: c, turn: turn, pass: pass, replies: replies}
	last, err := f.fit(orig, st)
	if err != nil {
		return Sized[R]{}, err
	}
	st.prevWire = last.Wire
	return last, nil
}

func (f *fitter[R]) fit(orig *records.Turn, st *Session) (Sized[R], error) {
	z, tok := f.z, f.z.m.Tokenizer
	target := f.c.Turns[f.turn].TargetISL
	base, ok := z.Predict(f.c, f.turn, f.pass, f.replies, st)
	if !ok {
		a, err := f.render(orig.Text)
		if err != nil {
			return Sized[R]{}, err
		}
		base = a.Wire
	}
	guess := orig.BareTokens + target - base
	if guess == orig.BareTokens {
		if err := f.ensure(orig.Text); err != nil {
			return Sized[R]{}, err
		}
		if f.last.Wire == target {
			return f.last, nil
		}
		base = f.last.Wire
		guess += target - f.last.Wire
	}
	// The candidates are counted from base, the count with compose's
	// text, plus what the changed end of the text adds (textStep), and
	// only the text found is rendered; if its render disagrees, the
	// search is done again, rendering every candidate.
	f.base = base
	text, out, err := resize(tok, orig, guess, target, func(text string) (sizing.Attempt, error) {
		return f.estimate(orig.Text, text), nil
	})
	if err != nil {
		return Sized[R]{}, err
	}
	if f.estText != text {
		f.estimate(orig.Text, text)
	}
	if err := f.ensure(text); err != nil {
		return Sized[R]{}, err
	}
	if f.last.Wire != f.want {
		if text, out, err = resize(tok, orig, guess, target, f.render); err != nil {
			return Sized[R]{}, err // render's and Build's errors name the conversation
		}
		if err := f.ensure(text); err != nil {
			return Sized[R]{}, err
		}
	}
	last := f.last
	switch out {
	case sizing.Unreachable:
		last.Unreachable = &records.Unreachable{MinISL: last.Wire, Short: last.Wire - target,
			Reason: "the history alone exceeds the target (replies before this turn were longer than budgeted): sent with a one-token text"}
	case sizing.Stuck:
		last.Unreachable = &records.Unreachable{MinISL: last.Wire, Short: last.Wire - target,
			Reason: "no text of this turn counts exactly the target with this tokenizer and template: sent the closest found (short says by how much)"}
	}
	if last.Unreachable == nil && last.Wire != target {
		// Never silently off: what goes out is what the record says.
		last.Unreachable = &records.Unreachable{MinISL: last.Wire, Short: last.Wire - target,
			Reason: "the text found does not count exactly the target: sent the closest found (short says by how much)"}
	}
	if text != orig.Text {
		from := orig.BareTokens
		last.ResizedFrom, last.resizedText = &from, text
	}
	return last, nil
}

// resize searches for the text of turn orig whose request counts target
// (eval counts a candidate), the bare count guessed to be guess. Only the
// part that changes is tokenized: the reserve, to grow, or the turn's
// last words and the reserve, to shrink, the text before them kept as it
// is; when that window cannot reach the target (a shrink beyond it), the
// whole text and reserve are searched. The result is the text to send
// (compose's own when nothing was found below the target).
func resize(tok *tokenizer.Tokenizer, orig *records.Turn, guess, target int, eval func(string) (sizing.Attempt, error)) (string, sizing.Outcome, error) {
	d := guess - orig.BareTokens
	for _, whole := range []bool{false, true} {
		head, seg, b := orig.Text, "", d
		switch {
		case whole:
			head, seg, b = "", orig.Text, guess
		case d < 0:
			cut := tailCut(orig.Text, orig.BareTokens, -d)
			if cut == 0 {
				continue // the window would be the whole text
			}
			head, seg = orig.Text[:cut], orig.Text[cut:]
			b = tok.Count(seg) + d
		}
		body := seg + orig.Reserve
		if body == "" {
			continue
		}
		gen, err := sizing.Verbatim(tok, body)
		if err != nil {
			continue // a body of spaces only encodes to nothing: no window here
		}
		// Text drops the leading spaces of its first piece; the seam
		// keeps them.
		joiner := body[:len(body)-len(strings.TrimLeft(body, " "))]
		a, out, err := gen.Search(0, b, target, func(x string) (sizing.Attempt, error) {
			at, err := eval(head + joiner + x)
			at.Text = x
			return at, err
		})
		if err != nil {
			return "", out, err
		}
		if out == sizing.Exact || whole {
			if a.Text == "" && out != sizing.Exact {
				return orig.Text, out, nil // nothing below the target
			}
			// An exact window may be empty: the head and the reserve's
			// leading whitespace alone (a token of its own) were counted.
			return head + joiner + a.Text, out, nil
		}
	}
	return orig.Text, sizing.Stuck, nil
}

// tailCut is where the last words of text (n bare tokens) begin that hold
// the shrink tokens to drop with room to spare: before a space, or 0 for
// the whole text.
func tailCut(text string, n, shrink int) int {
	perToken := float64(len(text)) / float64(max(n, 1))
	keep := len(text) - int(float64(shrink+32)*perToken*1.5) - 16
	if keep <= 0 {
		return 0
	}
	return max(strings.LastIndexByte(text[:keep], ' '), 0)
}

// Predict is the count of turn `turn`'s request with compose's text
// (c.Turns[turn] still holds it), from the previous request's count:
// compose's own step between the two dry-run requests, with the server's
// reply in place of the synthetic one. A first turn is compose's count
// with the marker of pass `pass` in place of pass 0's (markerStep); a
// later one carries the same marker as the request before it. ok is false
// where nothing predicts it (the first request of a session, counts
// compose did not record).
func (z *Sizer) Predict(c *records.Conversation, turn, pass int, replies []string, st *Session) (int, bool) {
	t := &c.Turns[turn]
	if t.WireISL == nil {
		return 0, false
	}
	if turn == 0 {
		return *t.WireISL + z.markerStep(c, pass), true
	}
	prev := &c.Turns[turn-1]
	if prev.WireISL == nil || st.prevWire == 0 || len(replies) < turn {
		return 0, false
	}
	tok := z.m.Tokenizer
	step := *t.WireISL - *prev.WireISL
	if reply := replies[turn-1]; reply != prev.Assistant {
		step += tok.Count(reply) - tok.Count(prev.Assistant)
	}
	return st.prevWire + step, true
}

// markerStep is how many tokens more (or fewer) turn 0's request counts
// with the marker of recycle pass `pass` than with pass 0's, which compose
// counted (wire_isl). The two requests differ only in the marker's digest,
// so only the marker and the word of its message beside it are counted,
// with each digest: byte-level pre-tokenizers split at the marker's
// brackets, and a SentencePiece BPE (with or without a pre-tokenizer)
// merges nothing across the space before a word, so the rest of the
// request tokenizes alike. A completions prompt, a Responses request and
// a bare count all carry the message text as it is, so the same step
// holds for them (TestExactRecycleFirstTurn: every reference
// model).
func (z *Sizer) markerStep(c *records.Conversation, pass int) int {
	if pass == 0 {
		return 0
	}
	was, now := wire.Marker(c, 0), wire.Marker(c, pass)
	if was == now || was == "" {
		return 0
	}
	// The message wire.Build puts the marker in (RouteMessages on a
	// request whose first message is the system prompt iff c has one).
	l := cachebust.Route(c.CacheBust, c.SystemPrompt != nil)
	var text string
	switch l.Slot {
	case cachebust.SharedSystemPrompt:
		text = c.SystemPrompt.Text
	case cachebust.FirstUserTurn:
		text = c.Turns[0].Text
	default:
		return 0
	}
	tok := z.m.Tokenizer
	if l.Prefix {
		w := firstWord(text)
		return tok.Count(now+w) - tok.Count(was+w)
	}
	w := lastWord(text)
	return tok.Count(w+now) - tok.Count(w+was)
}

// textStep is how many tokens more (or fewer) turn `turn`'s request of
// pass `pass` counts with text as the turn's text than with orig: the
// count of their ends from where they part (from the space before that
// word, where the pre-tokenizers start a piece), with the marker where it
// touches them (the first turn's, a suffix's always, a prefix's when the
// texts part in their first word). After the turn's text comes the
// template's end of the message (or nothing, for a completions prompt),
// where a count splits too.
func (z *Sizer) textStep(c *records.Conversation, turn, pass int, orig, text string) int {
	k := 0
	for k < len(orig) && k < len(text) && orig[k] == text[k] {
		k++
	}
	if k == len(orig) && k == len(text) {
		return 0
	}
	from := max(strings.LastIndexByte(orig[:k], ' '), 0)
	for from > 0 && orig[from-1] == ' ' {
		from--
	}
	pre, suf := "", ""
	if turn == 0 {
		if l := cachebust.Route(c.CacheBust, c.SystemPrompt != nil); l.Slot == cachebust.FirstUserTurn {
			switch m := wire.Marker(c, pass); {
			case !l.Prefix:
				suf = m
			case from == 0:
				pre = m
			}
		}
	}
	tok := z.m.Tokenizer
	return tok.Count(pre+text[from:]+suf) - tok.Count(pre+orig[from:]+suf)
}

// wordSpan bounds the text counted beside a marker (a text without spaces
// near its end is cut, where a SentencePiece count may then be a token
// off: the confirming render catches it).
const wordSpan = 64

// firstWord is the start of text up to its first space after the first
// byte, at most about wordSpan bytes (cut at a rune boundary).
func firstWord(text string) string {
	end := min(len(text), wordSpan)
	if i := strings.IndexByte(text[min(1, end):end], ' '); i >= 0 {
		return text[:i+min(1, end)]
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	return text[:end]
}

// lastWord is the end of text from its last space (which a byte-level
// pre-tokenizer and SentencePiece both keep with the word after it), at
// most about wordSpan bytes (cut at a rune boundary).
func lastWord(text string) string {
	start := max(0, len(text)-wordSpan)
	if i := strings.LastIndexByte(text[start:], ' '); i >= 0 {
		return text[start+i:]
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	return text[start:]
}
