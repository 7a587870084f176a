package vision

import (
	"math"
	"slices"
	"strings"
)

// kwargs reads a request's mm_processor_kwargs for one family: each key
// read is marked, and unread keys are refused by name, since a setting the
// rule does not apply would make its count wrong.
type kwargs struct {
	m    map[string]any
	seen map[string]bool
	err  error
}

func newKwargs(m map[string]any) *kwargs { return &kwargs{m: m, seen: map[string]bool{}} }

func (k *kwargs) fail(key, want string) {
	if k.err == nil {
		k.err = errorf("mm_processor_kwargs %s: %v is not %s", key, k.m[key], want)
	}
}

// integer reads key as a whole number (JSON numbers arrive as float64).
func (k *kwargs) integer(key string, def int) int {
	v, ok := k.m[key]
	if !ok {
		return def
	}
	k.seen[key] = true
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n)
		}
	case int:
		return n
	case int64:
		return int(n)
	}
	k.fail(key, "a whole number")
	return def
}

func (k *kwargs) number(key string, def float64) float64 {
	v, ok := k.m[key]
	if !ok {
		return def
	}
	k.seen[key] = true
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	}
	k.fail(key, "a number")
	return def
}

func (k *kwargs) boolean(key string, def bool) bool {
	v, ok := k.m[key]
	if !ok {
		return def
	}
	k.seen[key] = true
	if b, ok := v.(bool); ok {
		return b
	}
	k.fail(key, "true or false")
	return def
}

// edges reads a size object {"shortest_edge": n, "longest_edge": n} (the
// keys Qwen's processors name pixel counts with).
func (k *kwargs) edges(key string) (shortest, longest int, ok bool) {
	v, present := k.m[key]
	if !present {
		return 0, 0, false
	}
	k.seen[key] = true
	obj, isObj := v.(map[string]any)
	if !isObj {
		k.fail(key, "an object")
		return 0, 0, false
	}
	sub := newKwargs(obj)
	shortest = sub.integer("shortest_edge", 0)
	longest = sub.integer("longest_edge", 0)
	if err := sub.done(); err != nil && k.err == nil {
		k.err = err
	}
	if shortest <= 0 || longest <= 0 {
		k.fail(key, "an object with a positive shortest_edge and longest_edge")
		return 0, 0, false
	}
	return shortest, longest, true
}

// longestEdge reads {"longest_edge": n}.
func (k *kwargs) longestEdge(key string, def int) int {
	v, present := k.m[key]
	if !present {
		return def
	}
	k.seen[key] = true
	obj, isObj := v.(map[string]any)
	if !isObj {
		k.fail(key, "an object")
		return def
	}
	sub := newKwargs(obj)
	n := sub.integer("longest_edge", 0)
	if err := sub.done(); err != nil && k.err == nil {
		k.err = err
	}
	if n <= 0 {
		k.fail(key, "an object with a positive longest_edge")
		return def
	}
	return n
}

// done returns the first error, or names the keys nothing read.
func (k *kwargs) done() error {
	if k.err != nil {
		return k.err
	}
	var unknown []string
	for key := range k.m {
		if !k.seen[key] {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return errorf("mm_processor_kwargs %s: not a setting this family's processor takes", strings.Join(unknown, ", "))
	}
	return nil
}
