package testutil

import (
	"encoding/json"
	"time"
)

// WireCase is one line of golden/wire/MODEL.jsonl (testutil.RefDir): a chat request
// rendered by oracle/wire_ref.py through the model's template (Text) and
// counted by the Rust tokenizers (Tokens).
type WireCase struct {
	Case                string          `json:"case"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	Text                string          `json:"text"`
	Tokens              int             `json:"tokens"`
}

// Generation is add_generation_prompt, true when absent (wire_ref.py's
// default).
func (c WireCase) Generation() bool {
	return c.AddGenerationPrompt == nil || *c.AddGenerationPrompt
}

// HasTools reports whether the case carries tools (not absent or null).
func (c WireCase) HasTools() bool {
	return len(c.Tools) > 0 && string(c.Tools) != "null"
}

// WireNow is the strftime_now the wire golden files were rendered with
// (REF_NOW).
var WireNow = time.Date(2025, 7, 10, 12, 0, 0, 0, time.Local)
