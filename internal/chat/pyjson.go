package chat

import "github.com/islkit/islkit/internal/chat/internal/jinja"

// PyDumps is Python's json.dumps(v, ensure_ascii=False) of a JSON text:
// keys in document order (a repeated key keeps its first place and its
// last value, as a Python dict does), Python's float spelling. For
// renderers that vLLM runs as Python code rather than a template.
func PyDumps(raw []byte) (string, error) {
	v, err := jinja.FromJSON(raw)
	if err != nil {
		return "", err
	}
	return jinja.Dumps(v)
}
