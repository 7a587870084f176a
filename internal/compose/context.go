package compose

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/workload"
)

// unsetContext is where model_max_length stops meaning a length:
// transformers writes int(1e30) (VERY_LARGE_INTEGER) for "no limit known".
const unsetContext = 1 << 40

// ContextLength is the model's context length as its tokenizer_config.json
// states it (model_max_length), or 0 when it does not say.
func ContextLength(src *modelsrc.Source) int {
	if src == nil {
		return 0
	}
	data, err := src.ReadFile("tokenizer_config.json")
	if err != nil {
		return 0
	}
	var cfg struct {
		ModelMaxLength json.Number `json:"model_max_length"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return 0
	}
	n, err := strconv.ParseInt(cfg.ModelMaxLength.String(), 10, 64)
	if err != nil || n <= 0 || n >= unsetContext {
		return 0
	}
	return int(n)
}

// OverContext is what compose does with a dataset dialog or trace row
// whose request is above the model's context length (--over-context): a
// server refuses such a request, so by default it is left out (as vLLM's
// own benchmark samplers leave out too-long samples) rather than sent to
// fail; keep composes it anyway, to test the server's refusal. Either way
// each such row is warned about with its numbers.
type OverContext string

const (
	OverContextSkip OverContext = "skip"
	OverContextKeep OverContext = "keep"
)

// overContext notes the rows above the context length.
type overContext struct {
	context int    // model_max_length, 0 when unknown
	model   string // the model's name, for messages
	mode    OverContext
	mu      sync.Mutex
	rows    []workload.Skipped
}

// above tells whether a request of n tokens (turn k of the row at line,
// or record line of a JSON array)
// is above the context length, and notes it when it is; skip says to
// leave the row out.
func (o *overContext) above(line int, inArray bool, k, n int) (above, skip bool) {
	if o.context <= 0 || n <= o.context {
		return false, false
	}
	skip = o.mode != OverContextKeep
	what := "kept (--over-context keep): a server refuses it"
	if skip {
		what = "skipped (--over-context keep composes it)"
	}
	o.mu.Lock()
	o.rows = append(o.rows, workload.Skipped{Line: line, InArray: inArray, Reason: fmt.Sprintf("turn %d's request is %d tokens, above the model's context length %d (model_max_length of %s): %s", k, n, o.context, o.model, what)})
	o.mu.Unlock()
	return true, skip
}

// list returns the noted rows in line order.
func (o *overContext) list() []workload.Skipped {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.rows)
	slices.SortFunc(out, func(a, b workload.Skipped) int { return a.Line - b.Line })
	return out
}

// validOverContext checks an --over-context value ("" is skip).
func validOverContext(m OverContext) (OverContext, error) {
	switch m {
	case "", OverContextSkip:
		return OverContextSkip, nil
	case OverContextKeep:
		return m, nil
	}
	return "", usagef("--over-context %q: valid values are skip and keep", m)
}
