package modelsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cli"
)

// Tokenizer modes, as vLLM's --tokenizer-mode names them: auto (the
// folder's tokenizer.json, else its tekken or tiktoken file), mistral
// (mistral-common's files, tekken.json, even beside a tokenizer.json:
// vLLM's MistralTokenizer) and hf (tokenizer.json only).
const (
	ModeAuto    = "auto"
	ModeMistral = "mistral"
	ModeHF      = "hf"
)

// ParseMode checks a --tokenizer-mode value ("" is auto).
func ParseMode(s string) (string, error) {
	switch s {
	case "", ModeAuto:
		return ModeAuto, nil
	case ModeMistral, ModeHF:
		return s, nil
	}
	return "", cli.Usagef("--tokenizer-mode %q: want auto, mistral or hf", s)
}

// ResolveMode is Resolve under a --tokenizer-mode: mistral reads a
// folder's (or a Hub model's) tekken.json whatever else it has, hf
// refuses a model without tokenizer.json.
func ResolveMode(spec, mode string) (*Source, error) {
	mode, err := ParseMode(mode)
	if err != nil {
		return nil, err
	}
	switch mode {
	case ModeMistral:
		return resolveMistral(spec)
	case ModeHF:
		src, err := Resolve(spec)
		if err != nil {
			return nil, err
		}
		if src.Format != FormatHF {
			return nil, cli.Usagef("--tokenizer-mode hf: %s has no tokenizer.json (it is read as %s)", src.Name, filepath.Base(src.TokenizerFile))
		}
		return src, nil
	}
	return Resolve(spec)
}

func resolveMistral(spec string) (*Source, error) {
	if spec == "" {
		return nil, cli.Usagef("--tokenizer-mode mistral needs --tokenizer: the embedded model is not in Mistral format")
	}
	dir := spec
	if st, err := os.Stat(spec); err == nil {
		if !st.IsDir() {
			if f := formatOf(filepath.Base(spec)); f == FormatTekken || f == FormatSentencePiece {
				return Resolve(spec)
			}
			dir = filepath.Dir(spec)
		}
	} else {
		id, rev, _ := strings.Cut(spec, "@")
		if !looksLikeHubID(id) {
			return Resolve(spec) // its error
		}
		snap, err := hubMistral(id, rev)
		if err != nil {
			return nil, fmt.Errorf("--tokenizer %s: %w", spec, err)
		}
		dir = snap
	}
	if _, err := os.Stat(filepath.Join(dir, "tekken.json")); err != nil {
		m, _ := filepath.Glob(filepath.Join(dir, "tokenizer.model.v*"))
		switch {
		case len(m) == 1:
			if err := CheckParams(dir); err != nil {
				return nil, err
			}
			name := filepath.Base(m[0])
			return &Source{Name: spec, Dir: dir, FS: os.DirFS(dir), TokenizerFile: m[0], Format: FormatSentencePiece, tokName: name}, nil
		case len(m) > 1:
			return nil, cli.Usagef("--tokenizer-mode mistral: %s has %d tokenizer.model.v* files and no tekken.json: give the one to read as --tokenizer", dir, len(m))
		}
		return nil, cli.Usagef("--tokenizer-mode mistral: %s has no tekken.json (nor tokenizer.model.v*)", dir)
	}
	if err := CheckParams(dir); err != nil {
		return nil, err
	}
	return &Source{Name: spec, Dir: dir, FS: os.DirFS(dir), TokenizerFile: filepath.Join(dir, "tekken.json"), Format: FormatTekken, tokName: "tekken.json"}, nil
}

// hubMistral fetches a Hub model's mistral-common files (tekken.json,
// params.json, the tokenizer.model.v* files) into the shared cache.
func hubMistral(id, rev string) (string, error) {
	snap, err := newHubClient().Snapshot(context.Background(), id, rev, MistralHubFiles)
	if err != nil {
		return "", err
	}
	return snap.Dir, nil
}

// maxParamsSize bounds params.json: Mistral's are a few hundred bytes.
const maxParamsSize = 1 << 20

// paramsInts are the params.json fields read as sizes: positive
// integers when present.
var paramsInts = []string{"dim", "n_layers", "head_dim", "hidden_dim", "n_heads", "n_kv_heads", "vocab_size", "max_seq_len", "max_position_embeddings"}

// CheckParams reads dir's params.json, when there is one (Mistral's model
// config, vLLM's config_format mistral), and checks it as vLLM's loader
// would need it: a JSON object whose sizes are positive integers and
// whose vision_encoder, when present, is an object. A malformed file is
// an error naming the file and the field.
func CheckParams(dir string) error {
	path := filepath.Join(dir, "params.json")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxParamsSize+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxParamsSize {
		return fmt.Errorf("%s: larger than %d bytes, not a model's params.json", path, maxParamsSize)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%s: not a JSON object", path)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("%s: not valid JSON: %v", path, err)
	}
	for _, k := range paramsInts {
		raw, ok := fields[k]
		if !ok {
			continue
		}
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n <= 0 || bytes.ContainsAny(raw, ".eE") {
			return fmt.Errorf("%s: field %s: want a positive integer, got %.40s", path, k, raw)
		}
	}
	if raw, ok := fields["vision_encoder"]; ok {
		if t := bytes.TrimSpace(raw); string(t) != "null" && (len(t) == 0 || t[0] != '{') {
			return fmt.Errorf("%s: field vision_encoder: want an object, got %.40s", path, raw)
		}
	}
	return nil
}
