package jinja

import (
	"errors"
	"fmt"
	"time"
)

// This file is an islkit addition to the vendored engine: templates come from
// model repositories we do not control, so every render runs under a budget
// and exceeding it is an error rather than a hang, an out-of-memory kill or a
// fatal Go stack overflow.

// ErrLimit is wrapped by every error that reports an exceeded Limits bound.
var ErrLimit = errors.New("template execution limit exceeded")

// Limits bounds one render. A zero field takes the DefaultLimits value.
type Limits struct {
	MaxSteps  int64         // loop iterations plus macro/caller calls
	MaxDepth  int           // nesting of macro, caller and recursive-loop calls
	MaxOutput int           // bytes of any single string value and of the output
	MaxAlloc  int64         // bytes of strings built by concatenation, repetition and filters
	MaxTime   time.Duration // wall time of the render, from its 1024th step (shorter renders never read the clock)
}

// DefaultLimits are far above what real chat templates need (they run a few
// thousand steps and produce kilobytes) yet stop runaway templates in well
// under a second or two.
var DefaultLimits = Limits{
	MaxSteps:  5_000_000,
	MaxDepth:  256,
	MaxOutput: 64 << 20,
	MaxAlloc:  1 << 30,
	MaxTime:   10 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxSteps > 0 {
		d.MaxSteps = l.MaxSteps
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxOutput > 0 {
		d.MaxOutput = l.MaxOutput
	}
	if l.MaxAlloc > 0 {
		d.MaxAlloc = l.MaxAlloc
	}
	if l.MaxTime > 0 {
		d.MaxTime = l.MaxTime
	}
	return d
}

// budget is shared by all evaluators of one render (macros and loops create
// nested evaluators), so the counters are per render, not per evaluator.
type budget struct {
	lim Limits
	// deadline is set at the first clock check (step 1024): short renders,
	// nearly all of them, never read the clock.
	deadline time.Time
	steps    int64
	depth    int
	alloc    int64
}

// step accounts one unit of work; the clock is read every 1024 steps only.
func (b *budget) step() error {
	b.steps++
	if b.steps > b.lim.MaxSteps {
		return fmt.Errorf("%w: more than %d loop iterations and calls", ErrLimit, b.lim.MaxSteps)
	}
	if b.steps&1023 == 0 {
		now := time.Now()
		if b.deadline.IsZero() {
			b.deadline = now.Add(b.lim.MaxTime)
		} else if now.After(b.deadline) {
			return fmt.Errorf("%w: render took longer than %s", ErrLimit, b.lim.MaxTime)
		}
	}
	return nil
}

func (b *budget) enter() error {
	b.depth++
	if b.depth > b.lim.MaxDepth {
		return fmt.Errorf("%w: call depth above %d (runaway recursion)", ErrLimit, b.lim.MaxDepth)
	}
	return b.step()
}

func (b *budget) leave() { b.depth-- }

// built accounts a freshly built value of n bytes.
func (b *budget) built(n int) error {
	if n > b.lim.MaxOutput {
		return fmt.Errorf("%w: value of %d bytes exceeds %d", ErrLimit, n, b.lim.MaxOutput)
	}
	b.alloc += int64(n)
	if b.alloc > b.lim.MaxAlloc {
		return fmt.Errorf("%w: more than %d bytes of strings built", ErrLimit, b.lim.MaxAlloc)
	}
	return nil
}

// checkValue accounts v when it is a string or list just produced by an
// operator or a filter.
func (b *budget) checkValue(v Value) error {
	switch v.kind {
	case KindString:
		return b.built(len(v.v.(string)))
	case KindList:
		return b.built(16 * len(v.v.(*List).Items))
	}
	return nil
}
