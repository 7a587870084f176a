package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	json "github.com/goccy/go-json"
)

// fileJSON mirrors the top level of a HuggingFace tokenizer.json. Components
// stay raw until their "type" field says which Go type decodes them.
type fileJSON struct {
	Version       string          `json:"version"`
	AddedTokens   []AddedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Model         json.RawMessage `json:"model"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
}

// AddedToken is one entry of tokenizer.json's added_tokens.
type AddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// typed is used to read a component's "type" before decoding the rest.
type typed struct {
	Type string `json:"type"`
}

// LoadFile reads a tokenizer.json file.
func LoadFile(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := FromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// FromJSON builds a tokenizer from the bytes of a tokenizer.json. Every
// component type it does not implement exactly is an error naming the
// component, so a file can never be tokenized differently in silence.
func FromJSON(data []byte) (*Tokenizer, error) {
	t, _, err := fromJSON(data, buildModel)
	return t, err
}

// fromJSON builds a tokenizer from tokenizer.json bytes, its model with
// buildModel (the load cache supplies one that reads its binary form); it
// returns the top level read too, which the cache stores.
func fromJSON(data []byte, buildModel func(json.RawMessage) (model, error)) (*Tokenizer, *fileJSON, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("not a valid tokenizer.json: %w", err)
	}
	if len(f.Model) == 0 || isNull(f.Model) {
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(data, &keys)
		for _, k := range []string{"tokenizer_class", "chat_template", "model_max_length", "added_tokens_decoder"} {
			if _, ok := keys[k]; ok {
				return nil, nil, errors.New("this is a tokenizer_config.json, not a tokenizer.json: give the model's folder, or the tokenizer.json beside it")
			}
		}
		return nil, nil, errors.New("model: missing (is this a tokenizer.json?)")
	}
	t := &Tokenizer{}
	var err error
	if t.normalizer, err = buildNormalizer(f.Normalizer); err != nil {
		return nil, nil, fmt.Errorf("normalizer: %w", err)
	}
	if t.preTokenizer, err = buildPreTokenizer(f.PreTokenizer); err != nil {
		return nil, nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if t.model, err = buildModel(f.Model); err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	if t.postProcessor, err = buildPostProcessor(f.PostProcessor); err != nil {
		return nil, nil, fmt.Errorf("post_processor: %w", err)
	}
	if t.decoder, err = buildDecoder(f.Decoder); err != nil {
		return nil, nil, fmt.Errorf("decoder: %w", err)
	}
	if err := t.setAddedTokens(f.AddedTokens); err != nil {
		return nil, nil, fmt.Errorf("added_tokens: %w", err)
	}
	t.finish()
	return t, &f, nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func typeOf(raw json.RawMessage) (string, error) {
	var t typed
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", err
	}
	if t.Type == "" {
		return "", errors.New(`missing "type"`)
	}
	return t.Type, nil
}

// patternJSON is the {"String": "..."} or {"Regex": "..."} shape of Split and
// Replace patterns.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}
