package jinja

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Template is a compiled Jinja template ready for rendering.
type Template struct {
	nodes []node
	src   string
	// lastSize is the length of the latest output: the next render starts
	// with that much room instead of growing its buffer step by step.
	lastSize atomic.Int64
}

// Compile parses a Jinja template source string and returns a compiled
// template that can be rendered multiple times with different data.
func Compile(source string) (*Template, error) {
	segs, err := scan(source)
	if err != nil {
		return nil, fmt.Errorf("jinja scan: %w", err)
	}

	nodes, err := parseTemplate(segs)
	if err != nil {
		return nil, fmt.Errorf("jinja parse: %w", err)
	}

	return &Template{nodes: nodes, src: source}, nil
}

// Render executes the template with the provided data under DefaultLimits.
// Each call creates an isolated scope so templates are safe to render
// concurrently after compilation.
func (t *Template) Render(data map[string]any) (string, error) {
	vals := make(map[string]Value, len(data))
	for k, v := range data {
		vals[k] = FromGoValue(v)
	}
	return t.render(nil, vals, nil, Limits{})
}

// RenderValues is like Render but accepts pre-converted Value data and
// explicit limits (zero fields take DefaultLimits).
func (t *Template) RenderValues(data map[string]Value, lim Limits) (string, error) {
	return t.render(nil, data, nil, lim)
}

// RenderShared renders with two layers of variables: vars, this render's
// own (the template's top-level sets join them, so vars is the render's
// from then on), over shared, values that many renders use unchanged, such
// as special tokens. shared is only read, so it must hold immutable values
// (strings, numbers, callables), never a list or dict a template could
// change.
func (t *Template) RenderShared(shared map[string]Value, vars *Dict, lim Limits) (string, error) {
	return t.render(shared, nil, vars, lim)
}

// AppendShared is RenderShared appending the output to dst, for callers
// that reuse one buffer over many renders.
func (t *Template) AppendShared(dst []byte, shared map[string]Value, vars *Dict, lim Limits) ([]byte, error) {
	out, err := render(t.nodes, shared, nil, vars, lim, dst)
	if err != nil {
		return dst, err
	}
	t.lastSize.Store(int64(len(out) - len(dst)))
	return out, nil
}

func (t *Template) render(shared, data map[string]Value, vars *Dict, lim Limits) (string, error) {
	hint := int(t.lastSize.Load())
	out, err := render(t.nodes, shared, data, vars, lim, make([]byte, 0, min(hint+hint/8, 1<<24)))
	if err != nil {
		return "", err
	}
	t.lastSize.Store(int64(len(out)))
	return unsafe.String(unsafe.SliceData(out), len(out)), nil // out is not used again
}

// =============================================================================

// render executes the AST, appending the result to dst. Variables are
// looked up in vars, then data, then shared, then the builtins.
func render(nodes []node, shared, data map[string]Value, vars *Dict, lim Limits, dst []byte) ([]byte, error) {
	// One allocation holds the evaluator, its budget and its two scopes.
	st := &renderState{budget: budget{lim: lim.withDefaults()}}
	e := &st.eval
	e.output = outBuf{b: dst, start: len(dst)}
	e.b = &st.budget

	// The builtins scope is initialized once at package init and only read
	// after that, so sharing it across renders is safe.
	e.builtins = cachedBuiltins

	// The templates' top-level sets go into the root scope's own vars.
	e.scope = e.builtins
	if shared != nil {
		st.shared = scope{parent: e.scope, data: shared}
		e.scope = &st.shared
	}
	st.root = scope{parent: e.scope, data: data}
	st.root.vars.entries = st.root.inline[:0]
	if vars != nil {
		st.root.vars = *vars
	}
	e.scope = &st.root

	if err := e.execNodes(nodes); err != nil {
		return nil, err
	}
	return e.output.b, nil
}

type renderState struct {
	eval         evaluator
	budget       budget
	root, shared scope
}

// outBuf collects an evaluator's output. Unlike strings.Builder it can
// append to a caller's buffer; String does not copy, so it is called only
// once the evaluator is done writing.
type outBuf struct {
	b     []byte
	start int // where this output begins in b
}

func (o *outBuf) WriteString(s string) { o.b = append(o.b, s...) }

// Len is the length of this output (not counting what b held before).
func (o *outBuf) Len() int { return len(o.b) - o.start }

func (o *outBuf) String() string {
	out := o.b[o.start:]
	return unsafe.String(unsafe.SliceData(out), len(out))
}
