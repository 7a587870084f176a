package cachebust

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/islkit/islkit/internal/request"
)

// The messages are typed (request.Message): "content" is a string, a list
// of text parts, or null (which cannot carry a marker).

// ErrDropped is wrapped by Result.Dropped.
var ErrDropped = errors.New("cache-bust marker dropped")

// Result is the outcome of Inject.
type Result struct {
	// Messages is the array to send. It is the caller's slice when nothing
	// changed; otherwise a new slice whose changed message is a copy, the
	// others shared. The caller's messages are never modified.
	Messages []request.Message
	Landing  Landing
	// Index is the message that carries the marker (already or now), or -1.
	Index int
	// Changed is true when the marker was added by this call.
	Changed bool
	// Dropped is non-nil when the target asked for a marker but it could
	// not be placed (no user message, null content). The run goes on
	// without cache-busting for that request; callers log one warning
	// per run, not per request.
	Dropped error
}

// Inject puts marker into messages where RouteMessages says, prepending it
// for prefix targets and appending it otherwise:
//   - string content: concatenated (the marker keeps its "\n\n");
//   - list content: a text part of the marker without "\n\n" is inserted
//     first (prefix) or appended (suffix);
//   - null content: nothing changes and Dropped says why.
//
// It is idempotent: a message whose content already starts (prefix) or ends
// (suffix) with the marker, or whose first/last part is exactly the marker
// part, is left as is, so re-sending an accumulated history (where the
// first user message was marked on the first request) never stacks markers.
// With target None or an empty marker it returns messages unchanged.
func Inject(t Target, marker string, messages []request.Message) Result {
	return inject(t, marker, messages, false)
}

// InjectOwned is Inject for messages the caller has just built for this
// request and shares with no one (wire.Build): the message that takes the
// marker is changed in place, not copied with the slice.
func InjectOwned(t Target, marker string, messages []request.Message) Result {
	return inject(t, marker, messages, true)
}

func inject(t Target, marker string, messages []request.Message, owned bool) Result {
	if marker == "" || t == None || !t.Valid() {
		return Result{Messages: messages, Index: -1}
	}
	l, i := RouteMessages(t, messages)
	res := Result{Messages: messages, Landing: l, Index: i}
	if i < 0 {
		res.Dropped = fmt.Errorf("%w: target %s found no user message to carry it", ErrDropped, t)
		return res
	}
	m := messages[i]
	switch {
	case m.Null:
		res.Index = -1
		res.Dropped = fmt.Errorf("%w: cannot inject into messages[%d].content of type null", ErrDropped, i)
		return res
	case m.Parts != nil:
		part := strings.TrimSpace(marker)
		if len(m.Parts) > 0 && m.Parts[edge(len(m.Parts), l.Prefix)].Text == part {
			return res
		}
		m.Parts = insertPart(m.Parts, request.Part{Text: part}, l.Prefix)
	default:
		s, changed := injectText(m.Content, marker, l.Prefix)
		if !changed {
			return res
		}
		m.Content = s
	}
	res.Changed = true
	if !owned {
		res.Messages = slices.Clone(messages)
	}
	res.Messages[i] = m
	return res
}

// InjectString adds marker to a plain system prompt string (AIPerf's
// conversation-level system message): marker+s for prefix targets, s+marker
// otherwise; unchanged when t is None, marker is empty or s already has the
// marker at that end.
func InjectString(t Target, marker, s string) string {
	if marker == "" || t == None || !t.Valid() {
		return s
	}
	out, _ := injectText(s, marker, t.IsPrefix())
	return out
}

// injectText returns s with the marker at its start (prefix) or end, and
// whether that changed it.
func injectText(s, marker string, prefix bool) (string, bool) {
	if prefix {
		if strings.HasPrefix(s, marker) {
			return s, false
		}
		return marker + s, true
	}
	if strings.HasSuffix(s, marker) {
		return s, false
	}
	return s + marker, true
}

func edge(n int, prefix bool) int {
	if prefix {
		return 0
	}
	return n - 1
}

func insertPart(parts []request.Part, p request.Part, prefix bool) []request.Part {
	out := make([]request.Part, 0, len(parts)+1)
	if prefix {
		out = append(out, p)
		return append(out, parts...)
	}
	out = append(out, parts...)
	return append(out, p)
}
