package send

import (
	"slices"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
)

// requests makes the requests of a session: as compose wrote them
// (plainRequests) or each sized to its target against the real replies
// of its history (exactRequests, send --exact).
type requests interface {
	// conversation is what a session of c builds its turns from: c, or
	// the session's own copy where a resized text becomes the history of
	// the turns after it.
	conversation(c *records.Conversation) *records.Conversation
	// make builds turn `turn` of c; orig is compose's conversation, st
	// the session's sizing state.
	make(c, orig *records.Conversation, turn, pass int, replies []string, st *exact.Session) (made, error)
	// sent completes the record of a request that went out, its making
	// having taken took. (m by value: a pointer through the interface
	// would put every request's m on the heap.)
	sent(m made, rec *records.Request, res *records.Result, took time.Duration)
}

// made is one request built, with what sizing found (nothing for a plain
// request).
type made = exact.Sized[Built]

// plainRequests are the requests as compose wrote them.
type plainRequests struct{ b *Builder }

func (plainRequests) conversation(c *records.Conversation) *records.Conversation { return c }

func (p plainRequests) make(c, _ *records.Conversation, turn, pass int, replies []string, _ *exact.Session) (made, error) {
	built, err := p.b.Build(c, turn, pass, replies)
	return made{Built: built}, err
}

func (plainRequests) sent(made, *records.Request, *records.Result, time.Duration) {}

// exactRequests are the requests of send --exact, each made to count its
// target_isl.
type exactRequests struct {
	b *Builder
	z *exact.Sizer
}

func (exactRequests) conversation(c *records.Conversation) *records.Conversation {
	cp := *c
	cp.Turns = slices.Clone(c.Turns)
	return &cp
}

func (e exactRequests) make(c, orig *records.Conversation, turn, pass int, replies []string, st *exact.Session) (made, error) {
	return exact.Fit(e.z, e.b, c, &orig.Turns[turn], turn, pass, replies, st)
}

// sent records the count and what resizing did; the resized text's own
// count is for the record only: taken once the request is out.
func (e exactRequests) sent(m made, rec *records.Request, res *records.Result, took time.Duration) {
	m.Finish(e.z)
	n := m.Wire
	rec.ExpectedISL, rec.ResizedFrom, rec.ResizedTo, rec.Unreachable = &n, m.ResizedFrom, m.ResizedTo, m.Unreachable
	sizing := took.Nanoseconds()
	res.SizingNs = &sizing
}
