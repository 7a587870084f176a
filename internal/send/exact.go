package send

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/model"
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

// LoadExactModel loads the model pin names for send --exact
// (model.LoadPinned): o's flags default to the pin's tokenizer, chat
// template and clock, and a model other than the pin's is a usage error.
func LoadExactModel(pin records.ModelPin, o model.Options) (*model.Model, error) {
	return model.LoadPinned(pin, o, ExactPinNamed, ExactPinFix(pin))
}

// ExactPinNamed names the pin send --exact checks its model against.
const ExactPinNamed = "the conversations"

// ExactPinFix says what to do when send --exact's model is not pin's.
func ExactPinFix(pin records.ModelPin) string {
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
// (LoadExactModel), as profile renders requests. Without a template (the
// conversations were composed bare, or the model has none) the targets are
// bare counts.
func NewSizer(m *model.Model, profile serverprofile.Profile) *Sizer {
	return &Sizer{m: m, profile: profile, bare: m.Template == nil}
}

// count is the request's ISL as the server profile counts body
// (serverprofile.Render): rendered through the template, or the bare
// count when the conversations were composed without one (their targets
// are bare counts, the message texts joined by one space, as compose
// counted them); a completions prompt as the server encodes it, special
// tokens included (compose's target counts them too).
func (z *Sizer) count(body []byte) (int, error) {
	z.renders.Add(1)
	ex, err := extract.Body(body)
	if err != nil {
		return 0, err
	}
	var t *chat.Template
	if !z.bare {
		t = z.m.Template
	}
	pr, err := serverprofile.Render(z.profile, ex, t, z.m.Now, nil)
	if err != nil {
		return 0, err
	}
	return pr.Count(z.m.Tokenizer), nil
}

// sized is a request made exact, with what its record says about it.
type sized struct {
	built Built
	wire  int // its count
	// resizedFrom/To are the bare tokens before and after, nil when the
	// text went out as compose wrote it.
	resizedFrom, resizedTo *int
	unreachable            *records.Unreachable
	// resizedText is the text whose count becomes resizedTo, taken by
	// finish after the request went out (it is not needed to send it).
	resizedText string
}

// finish counts the resized text for the record (resized_to).
func (z *Sizer) finish(s *sized) {
	if s.resizedFrom != nil && s.resizedTo == nil {
		n := z.m.Tokenizer.Count(s.resizedText)
		s.resizedTo = &n
	}
}

// sessionState carries what the previous request of a session taught the
// next one's first guess.
type sessionState struct {
	prevWire int // the previous request's count; 0 before the first
}

// fit sizes turn `turn` of c (the session's own copy, whose earlier turns
// hold the texts that were sent) against replies, sets c.Turns[turn].Text
// to the text sent, and builds the request. orig is compose's turn.
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
func (z *Sizer) fit(b *Builder, c *records.Conversation, orig *records.Turn, turn, pass int, replies []string, st *sessionState) (sized, error) {
	z.requests.Add(1)
	t := &c.Turns[turn]
	tok := z.m.Tokenizer
	var last sized
	lastText := ""
	eval := func(text string) (sizing.Attempt, error) {
		t.Text = text
		built, err := b.Build(c, turn, pass, replies)
		if err != nil {
			return sizing.Attempt{}, err
		}
		n, err := z.count(built.Body)
		if err != nil {
			return sizing.Attempt{}, fmt.Errorf("conversation %s turn %d: counting the request: %w", c.ID, turn, err)
		}
		last, lastText = sized{built: built, wire: n}, text
		return sizing.Attempt{Text: text, Wire: n}, nil
	}
	target := t.TargetISL
	base, ok := z.predict(c, turn, pass, replies, st)
	if !ok {
		a, err := eval(orig.Text)
		if err != nil {
			return sized{}, err
		}
		base = a.Wire
	}
	guess := orig.BareTokens + target - base
	if guess == orig.BareTokens {
		if lastText != orig.Text || last.built.Body == nil {
			if _, err := eval(orig.Text); err != nil {
				return sized{}, err
			}
		}
		if last.wire == target {
			st.prevWire = last.wire
			return last, nil
		}
		base = last.wire
		guess += target - last.wire
	}
	// The candidates are counted from base, the count with compose's
	// text, plus what the changed end of the text adds (textStep), and
	// only the text found is rendered; if its render disagrees, the
	// search is done again, rendering every candidate.
	estText, want := "", 0 // the last candidate estimated
	estimate := func(text string) (sizing.Attempt, error) {
		estText, want = text, base+z.textStep(c, turn, pass, orig.Text, text)
		return sizing.Attempt{Text: text, Wire: want}, nil
	}
	text, out, err := resize(tok, orig, guess, target, estimate)
	if err != nil {
		return sized{}, err
	}
	if estText != text {
		want = base + z.textStep(c, turn, pass, orig.Text, text)
	}
	// (An empty text found is lastText's zero value: the body says
	// whether it was rendered.)
	if lastText != text || last.built.Body == nil {
		if _, err = eval(text); err != nil {
			return sized{}, err
		}
	}
	if last.wire != want {
		text, out, err = resize(tok, orig, guess, target, eval)
		if err != nil {
			return sized{}, err // eval's and Build's errors name the conversation
		}
		if lastText != text || last.built.Body == nil {
			if _, err = eval(text); err != nil {
				return sized{}, err
			}
		}
	}
	switch out {
	case sizing.Unreachable:
		last.unreachable = &records.Unreachable{MinISL: last.wire, Short: last.wire - target,
			Reason: "the history alone exceeds the target (replies before this turn were longer than budgeted): sent with a one-token text"}
	case sizing.Stuck:
		last.unreachable = &records.Unreachable{MinISL: last.wire, Short: last.wire - target,
			Reason: "no text of this turn counts exactly the target with this tokenizer and template: sent the closest found (short says by how much)"}
	}
	if last.unreachable == nil && last.wire != target {
		// Never silently off: what goes out is what the record says.
		last.unreachable = &records.Unreachable{MinISL: last.wire, Short: last.wire - target,
			Reason: "the text found does not count exactly the target: sent the closest found (short says by how much)"}
	}
	if text != orig.Text {
		from := orig.BareTokens
		last.resizedFrom, last.resizedText = &from, text
	}
	st.prevWire = last.wire
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

// predict is the count of turn `turn`'s request with compose's text
// (c.Turns[turn] still holds it), from the previous request's count:
// compose's own step between the two dry-run requests, with the server's
// reply in place of the synthetic one. A first turn is compose's count
// with the marker of pass `pass` in place of pass 0's (markerStep); a
// later one carries the same marker as the request before it. ok is false
// where nothing predicts it (the first request of a session, counts
// compose did not record).
func (z *Sizer) predict(c *records.Conversation, turn, pass int, replies []string, st *sessionState) (int, bool) {
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
