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
	return t.render(vals, Limits{})
}

// RenderValues is like Render but accepts pre-converted Value data and
// explicit limits (zero fields take DefaultLimits).
func (t *Template) RenderValues(data map[string]Value, lim Limits) (string, error) {
	return t.render(data, lim)
}

func (t *Template) render(data map[string]Value, lim Limits) (string, error) {
	out, err := render(t.nodes, data, lim, int(t.lastSize.Load()))
	if err == nil {
		t.lastSize.Store(int64(len(out)))
	}
	return out, err
}

// =============================================================================

// render executes the AST with the given data and returns the result.
func render(nodes []node, data map[string]Value, lim Limits, sizeHint int) (string, error) {
	e := evaluator{
		output: strings.Builder{},
		b:      newBudget(lim),
	}
	e.output.Grow(min(sizeHint+sizeHint/8, 1<<24))

	// The builtins scope is initialized once at package init and only read
	// after that, so sharing it across renders is safe.
	e.builtins = cachedBuiltins

	// Create user data scope on top of builtins.
	e.scope = newScope(e.builtins)
	for k, v := range data {
		e.scope.set(k, v)
	}

	if err := e.execNodes(nodes); err != nil {
		return "", err
	}

	return e.output.String(), nil
}
