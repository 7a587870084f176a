package cachebust

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Messages are OpenAI-style chat messages as decoded from JSON into
// map[string]any: "role" is a string and "content" is either a string or a
// list of parts ([]any of map[string]any, e.g. {"type":"text","text":...} or
// {"type":"image_url",...}); []map[string]any parts built in Go are accepted
// too. Maps keep every other field (name, tool_calls, ...) as sent, which a
// typed struct would silently drop.

// ErrDropped is wrapped by Result.Dropped.
var ErrDropped = errors.New("cache-bust marker dropped")

// Result is the outcome of Inject.
type Result struct {
	// Messages is the array to send. It is the caller's slice when nothing
	// changed; otherwise a new slice whose changed message is a new map,
	// the others shared. The caller's messages are never modified.
	Messages []map[string]any
	Landing  Landing
	// Index is the message that carries the marker (already or now), or -1.
	Index int
	// Changed is true when the marker was added by this call.
	Changed bool
	// Dropped is non-nil when the target asked for a marker but it could
	// not be placed (no user message, content of another shape). The run
	// goes on without cache-busting for that request; callers log one
	// warning per run, not per request.
	Dropped error
}

// Inject puts marker into messages where RouteMessages says, prepending it
// for prefix targets and appending it otherwise:
//   - string content: concatenated (the marker keeps its "\n\n");
//   - list content: a {"type":"text","text":<marker without "\n\n">} part
//     is inserted first (prefix) or appended (suffix);
//   - any other content: nothing changes and Dropped says why.
//
// It is idempotent: a message whose content already starts (prefix) or ends
// (suffix) with the marker, or whose first/last part is exactly the marker
// part, is left as is, so re-sending an accumulated history (where the
// first user message was marked on the first request) never stacks markers.
// With target None or an empty marker it returns messages unchanged.
func Inject(t Target, marker string, messages []map[string]any) Result {
	return inject(t, marker, messages, false)
}

// InjectOwned is Inject for messages the caller has just built for this
// request and shares with no one (wire.Messages): the message that takes
// the marker is changed in place, not copied with the slice, which is a
// map clone per request on send's path.
func InjectOwned(t Target, marker string, messages []map[string]any) Result {
	return inject(t, marker, messages, true)
}

func inject(t Target, marker string, messages []map[string]any, owned bool) Result {
	if marker == "" || t == None || !t.Valid() {
		return Result{Messages: messages, Index: -1}
	}
	l, i := RouteMessages(t, messages)
	res := Result{Messages: messages, Landing: l, Index: i}
	if i < 0 {
		res.Dropped = fmt.Errorf("%w: target %s found no user message to carry it", ErrDropped, t)
		return res
	}
	content, changed, ok := injectContent(messages[i]["content"], marker, l.Prefix)
	if !ok {
		res.Index = -1
		res.Dropped = fmt.Errorf("%w: cannot inject into messages[%d].content of type %s",
			ErrDropped, i, jsonType(messages[i]["content"]))
		return res
	}
	if !changed {
		return res
	}
	res.Changed = true
	if owned {
		messages[i]["content"] = content
		return res
	}
	msg := maps.Clone(messages[i])
	msg["content"] = content
	res.Messages = slices.Clone(messages)
	res.Messages[i] = msg
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
	out, _, _ := injectContent(s, marker, t.IsPrefix())
	return out.(string)
}

// injectContent returns the new content, whether it differs, and false
// when the content has a shape the marker cannot go into.
func injectContent(content any, marker string, prefix bool) (any, bool, bool) {
	part := strings.TrimSpace(marker)
	switch c := content.(type) {
	case string:
		if prefix {
			if strings.HasPrefix(c, marker) {
				return c, false, true
			}
			return marker + c, true, true
		}
		if strings.HasSuffix(c, marker) {
			return c, false, true
		}
		return c + marker, true, true
	case []any:
		if len(c) > 0 && isMarkerPart(c[edge(len(c), prefix)], part) {
			return c, false, true
		}
		return insertPart(c, any(markerPart(part)), prefix), true, true
	case []map[string]any:
		if len(c) > 0 && isMarkerPart(c[edge(len(c), prefix)], part) {
			return c, false, true
		}
		return insertPart(c, markerPart(part), prefix), true, true
	default:
		return content, false, false
	}
}

func edge(n int, prefix bool) int {
	if prefix {
		return 0
	}
	return n - 1
}

func markerPart(text string) map[string]any {
	return map[string]any{"type": "text", "text": text}
}

// isMarkerPart is AIPerf V-B's edge check: the part equals the marker part
// exactly (no other keys).
func isMarkerPart(p any, text string) bool {
	m, ok := p.(map[string]any)
	if !ok || len(m) != 2 {
		return false
	}
	typ, _ := m["type"].(string)
	txt, _ := m["text"].(string)
	return typ == "text" && txt == text
}

func insertPart[E any](parts []E, p E, prefix bool) []E {
	out := make([]E, 0, len(parts)+1)
	if prefix {
		out = append(out, p)
		return append(out, parts...)
	}
	out = append(out, parts...)
	return append(out, p)
}

// jsonType names a decoded JSON value's type for the drop message.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int, int64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	default:
		return fmt.Sprintf("%T", v)
	}
}
