package compose

import (
	"encoding/json"
	"strconv"

	"github.com/islkit/islkit/internal/modelsrc"
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
