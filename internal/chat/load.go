package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// specialKeys are the tokenizer attributes transformers exposes to templates
// (special_tokens_map), besides additional_special_tokens.
var specialKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

// LoadFS loads the chat template of a model folder laid out as on the Hub,
// as transformers does: chat_template.jinja wins (with any
// additional_chat_templates/NAME.jinja as named templates), else
// tokenizer_config.json's chat_template, a string or a list of
// {"name","template"}. A non-empty override is a template file path
// (--chat-template FILE) that beats both. Special tokens always come from
// tokenizer_config.json. It returns ErrNoTemplate when there is none.
func LoadFS(fsys fs.FS, override string, opts ...Option) (*Template, error) {
	cfg, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	sources, err := templateSources(fsys, cfg, override)
	if err != nil {
		return nil, err
	}
	opts = append([]Option{WithSpecialTokens(cfg.special())}, opts...)
	return compileNamed(sources, opts)
}

// HasTemplate reports cheaply whether LoadFS would find a template.
func HasTemplate(fsys fs.FS) bool {
	if _, err := fs.Stat(fsys, "chat_template.jinja"); err == nil {
		return true
	}
	cfg, err := readConfig(fsys)
	if err != nil {
		return false
	}
	ct := cfg["chat_template"]
	return len(ct) > 0 && string(ct) != "null"
}

type tokenizerConfig map[string]json.RawMessage

func readConfig(fsys fs.FS) (tokenizerConfig, error) {
	data, err := fs.ReadFile(fsys, "tokenizer_config.json")
	if errors.Is(err, fs.ErrNotExist) {
		return tokenizerConfig{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	var cfg tokenizerConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json: %w", err)
	}
	return cfg, nil
}

func (c tokenizerConfig) special() map[string]any {
	out := map[string]any{}
	for _, k := range specialKeys {
		if raw, ok := c[k]; ok {
			if s, ok := tokenText(raw); ok {
				out[k] = s
			}
		}
	}
	if raw, ok := c["additional_special_tokens"]; ok {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			items := make([]any, 0, len(list))
			for _, item := range list {
				if s, ok := tokenText(item); ok {
					items = append(items, s)
				}
			}
			out["additional_special_tokens"] = items
		}
	}
	return out
}

func templateSources(fsys fs.FS, cfg tokenizerConfig, override string) (map[string]string, error) {
	if override != "" {
		data, err := os.ReadFile(override)
		if err != nil {
			return nil, fmt.Errorf("chat: --chat-template: %w", err)
		}
		return map[string]string{"default": string(data)}, nil
	}
	if data, err := fs.ReadFile(fsys, "chat_template.jinja"); err == nil {
		sources := map[string]string{"default": string(data)}
		extra, _ := fs.Glob(fsys, "additional_chat_templates/*.jinja")
		for _, p := range extra {
			if b, err := fs.ReadFile(fsys, p); err == nil {
				sources[strings.TrimSuffix(path.Base(p), ".jinja")] = string(b)
			}
		}
		return sources, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chat: %w", err)
	}
	raw, ok := cfg["chat_template"]
	if !ok || string(raw) == "null" {
		return nil, ErrNoTemplate
	}
	var single string
	if err := json.Unmarshal(raw, &single); err == nil {
		return map[string]string{"default": single}, nil
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json chat_template is neither a string nor a list of {name, template}: %w", err)
	}
	if len(list) == 0 {
		return nil, ErrNoTemplate
	}
	sources := make(map[string]string, len(list))
	for _, nt := range list {
		sources[nt.Name] = nt.Template
	}
	return sources, nil
}
