package jinja

import (
	"fmt"
	"strings"
	"sync/atomic"
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
	return t.render(nil, vals, Limits{})
}

// RenderValues is like Render but accepts pre-converted Value data and
// explicit limits (zero fields take DefaultLimits).
func (t *Template) RenderValues(data map[string]Value, lim Limits) (string, error) {
	return t.render(nil, data, lim)
}

// RenderShared is RenderValues with a second, shared layer of variables
// under data: values that many renders use unchanged, such as special
// tokens. shared is only read, so it must hold immutable values (strings,
// numbers, callables), never a list or dict a template could change.
func (t *Template) RenderShared(shared, data map[string]Value, lim Limits) (string, error) {
	return t.render(shared, data, lim)
}

func (t *Template) render(shared, data map[string]Value, lim Limits) (string, error) {
	out, err := render(t.nodes, shared, data, lim, int(t.lastSize.Load()))
	if err == nil {
		t.lastSize.Store(int64(len(out)))
	}
	return out, err
}

// =============================================================================

// render executes the AST with the given data and returns the result.
func render(nodes []node, shared, data map[string]Value, lim Limits, sizeHint int) (string, error) {
	e := evaluator{
		output: strings.Builder{},
		b:      newBudget(lim),
	}
	e.output.Grow(min(sizeHint+sizeHint/8, 1<<24))

	// The builtins scope is initialized once at package init and only read
	// after that, so sharing it across renders is safe.
	e.builtins = cachedBuiltins

	// User data over the shared layer over builtins; the templates'
	// top-level sets go into the data scope's own vars.
	e.scope = e.builtins
	if shared != nil {
		e.scope = newScope(e.scope)
		e.scope.data = shared
	}
	e.scope = newScope(e.scope)
	e.scope.data = data

	if err := e.execNodes(nodes); err != nil {
		return "", err
	}

	return e.output.String(), nil
}
