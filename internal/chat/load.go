package chat

import (
	"crypto/sha256"
	"encoding/hex"
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
// as transformers does (see FindTemplate). Special tokens always come from
// tokenizer_config.json. It returns ErrNoTemplate when there is none.
func LoadFS(fsys fs.FS, override string, opts ...Option) (*Template, error) {
	cfg, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	src, err := findTemplate(fsys, cfg, override)
	if err != nil {
		return nil, err
	}
	for name, text := range src.Named {
		if strings.TrimSpace(text) == "" {
			if name == "default" {
				return nil, fmt.Errorf("chat: %s: %w", src.Origin, ErrEmptyTemplate)
			}
			return nil, fmt.Errorf("chat: %s: template %q: %w", src.Origin, name, ErrEmptyTemplate)
		}
	}
	opts = append([]Option{WithSpecialTokens(cfg.special())}, opts...)
	return compileNamed(src.Named, opts)
}

// TemplateSource is where a model's chat templates come from.
type TemplateSource struct {
	// Origin is "--chat-template", "chat_template.jinja" or
	// "tokenizer_config.json".
	Origin string
	// SHA256 is the hex digest of the bytes the templates were read
	// from: the file, the config's chat_template string or list (plus
	// each additional_chat_templates file, by name, after
	// chat_template.jinja's bytes).
	SHA256 string
	// Named maps template names ("default", "tool_use", ...) to sources.
	Named map[string]string
}

// FindTemplate finds a model's chat templates without compiling them:
// a non-empty override is a template file path (--chat-template FILE);
// else chat_template.jinja (with any additional_chat_templates/NAME.jinja
// as named templates); else tokenizer_config.json's chat_template, a
// string or a list of {"name","template"}. It returns ErrNoTemplate when
// there is none.
func FindTemplate(fsys fs.FS, override string) (*TemplateSource, error) {
	cfg, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	return findTemplate(fsys, cfg, override)
}

// SpecialTokensFS returns the special-token variables LoadFS gives the
// template (bos_token, ..., additional_special_tokens), nil when
// tokenizer_config.json has none.
func SpecialTokensFS(fsys fs.FS) (map[string]any, error) {
	cfg, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	if sp := cfg.special(); len(sp) > 0 {
		return sp, nil
	}
	return nil, nil
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

func findTemplate(fsys fs.FS, cfg tokenizerConfig, override string) (*TemplateSource, error) {
	if override != "" {
		data, err := os.ReadFile(override)
		if err != nil {
			return nil, fmt.Errorf("chat: --chat-template: %w", err)
		}
		return &TemplateSource{Origin: "--chat-template", SHA256: digest(data), Named: map[string]string{"default": string(data)}}, nil
	}
	if data, err := fs.ReadFile(fsys, "chat_template.jinja"); err == nil {
		src := &TemplateSource{Origin: "chat_template.jinja", Named: map[string]string{"default": string(data)}}
		h := sha256.New()
		h.Write(data)
		extra, _ := fs.Glob(fsys, "additional_chat_templates/*.jinja") // sorted
		for _, p := range extra {
			if b, err := fs.ReadFile(fsys, p); err == nil {
				name := strings.TrimSuffix(path.Base(p), ".jinja")
				src.Named[name] = string(b)
				fmt.Fprintf(h, "\x00%s\x00%s", name, b)
			}
		}
		src.SHA256 = hex.EncodeToString(h.Sum(nil))
		return src, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chat: %w", err)
	}
	raw, ok := cfg["chat_template"]
	if !ok || string(raw) == "null" {
		return nil, ErrNoTemplate
	}
	var single string
	if err := json.Unmarshal(raw, &single); err == nil {
		return &TemplateSource{Origin: "tokenizer_config.json", SHA256: digest([]byte(single)), Named: map[string]string{"default": single}}, nil
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
	src := &TemplateSource{Origin: "tokenizer_config.json", SHA256: digest(raw), Named: make(map[string]string, len(list))}
	for _, nt := range list {
		src.Named[nt.Name] = nt.Template
	}
	return src, nil
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
