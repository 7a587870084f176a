package jinja

// Dumps is Python's json.dumps(v, ensure_ascii=False) with its default
// separators: the tojson filter's text, for renderers written in Python
// that dump values themselves (DeepSeek-V3.2's encoder).
func Dumps(v Value) (string, error) {
	out, err := filterTojson([]Value{v}, nil)
	if err != nil {
		return "", err
	}
	return out.AsString(), nil
}
