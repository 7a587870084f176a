// Package modelsrc finds a model's tokenizer files from what a user passes
// as --tokenizer: a tokenizer.json file, a model folder, a Hub id looked up
// offline in the HuggingFace cache, or nothing for the embedded default
// (Qwen3). Every tool resolves models through it, so they agree on what a
// name means.
package modelsrc

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/tokenizer"
)

// DefaultName names the embedded model in records and messages.
const DefaultName = "Qwen/Qwen3 (embedded)"

//go:embed defaultmodel/tokenizer.json.gz defaultmodel/tokenizer_config.json.gz
var defaultFiles embed.FS

// Source is a resolved model: its files and where they came from.
type Source struct {
	// Name is what the user asked for, or DefaultName.
	Name string
	// Dir is the folder on disk, empty for the embedded model.
	Dir string
	// FS holds tokenizer.json and, where present, tokenizer_config.json and
	// chat_template.jinja.
	FS fs.FS
	// TokenizerFile is the path shown in messages.
	TokenizerFile string

	once sync.Once
	tok  *tokenizer.Tokenizer
	hash string
	err  error
}

// Resolve turns a --tokenizer value into a Source. spec may be empty (the
// embedded default), a tokenizer.json path, a folder, or ORG/NAME, looked up
// in $HF_HUB_CACHE or $HF_HOME/hub (default ~/.cache/huggingface/hub)
// without any network access.
func Resolve(spec string) (*Source, error) {
	if spec == "" {
		return Default()
	}
	if st, err := os.Stat(spec); err == nil {
		if st.IsDir() {
			return fromDir(spec, spec)
		}
		dir := filepath.Dir(spec)
		return &Source{Name: spec, Dir: dir, FS: singleFileFS{dir: dir, file: filepath.Base(spec)}, TokenizerFile: spec}, nil
	}
	if looksLikeHubID(spec) {
		dir, err := hubSnapshot(spec)
		if err != nil {
			return nil, err
		}
		return fromDir(spec, dir)
	}
	return nil, fmt.Errorf("--tokenizer %s: no such file or folder, and not an ORG/NAME model id", spec)
}

func fromDir(name, dir string) (*Source, error) {
	path := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%s: no tokenizer.json in this folder", dir)
	}
	return &Source{Name: name, Dir: dir, FS: os.DirFS(dir), TokenizerFile: path}, nil
}

func looksLikeHubID(s string) bool {
	org, name, ok := strings.Cut(s, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") && !strings.HasPrefix(s, ".")
}

// HubCacheDir is where the HuggingFace hub cache lives on this machine.
func HubCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// hubSnapshot finds the snapshot folder of a cached Hub model: the revision
// refs/main points to, else the only (or newest) snapshot that has a
// tokenizer.json.
func hubSnapshot(id string) (string, error) {
	cache := HubCacheDir()
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(id, "/", "--"))
	snaps := filepath.Join(repo, "snapshots")
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err == nil {
		dir := filepath.Join(snaps, strings.TrimSpace(string(ref)))
		if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
			return dir, nil
		}
	}
	entries, err := os.ReadDir(snaps)
	if err != nil {
		return "", fmt.Errorf("--tokenizer %s: not in the HuggingFace cache (looked in %s; this tool never downloads: fetch it with `hf download %s` or pass a folder)", id, snaps, id)
	}
	type cand struct {
		dir string
		mod int64
	}
	var cands []cand
	for _, e := range entries {
		dir := filepath.Join(snaps, e.Name())
		if st, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
			cands = append(cands, cand{dir, st.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("--tokenizer %s: %s has no snapshot with a tokenizer.json", id, snaps)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	return cands[0].dir, nil
}

// Default returns the embedded Qwen3 tokenizer folder.
func Default() (*Source, error) {
	files := memFS{}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		data, err := gunzip(defaultFiles, "defaultmodel/"+name+".gz")
		if err != nil {
			return nil, fmt.Errorf("embedded default model: %s: %w", name, err)
		}
		files[name] = data
	}
	return &Source{Name: DefaultName, FS: files, TokenizerFile: "(embedded)/tokenizer.json"}, nil
}

func gunzip(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Tokenizer loads (once) and returns the model's tokenizer.
func (s *Source) Tokenizer() (*tokenizer.Tokenizer, error) {
	s.once.Do(func() {
		data, err := fs.ReadFile(s.FS, "tokenizer.json")
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.TokenizerFile, err)
			return
		}
		sum := sha256.Sum256(data)
		s.hash = hex.EncodeToString(sum[:])
		tok, err := tokenizer.FromJSON(data)
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.TokenizerFile, err)
			return
		}
		s.tok = tok
	})
	return s.tok, s.err
}

// TokenizerSHA256 is the hex SHA-256 of tokenizer.json, for provenance.
func (s *Source) TokenizerSHA256() (string, error) {
	if _, err := s.Tokenizer(); err != nil {
		return "", err
	}
	return s.hash, nil
}

// ReadFile reads one of the model's files; a missing file is fs.ErrNotExist.
func (s *Source) ReadFile(name string) ([]byte, error) {
	return fs.ReadFile(s.FS, name)
}

// singleFileFS exposes the folder of a tokenizer.json path given directly,
// but names the given file tokenizer.json whatever it is called.
type singleFileFS struct{ dir, file string }

func (s singleFileFS) Open(name string) (fs.File, error) {
	if name == "tokenizer.json" {
		name = s.file
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return os.DirFS(s.dir).Open(name)
}

// memFS is a flat read-only folder of in-memory files (the embedded model,
// decompressed). It replaces testing/fstest.MapFS, which would link a test
// package into every binary.
type memFS map[string][]byte

func (m memFS) Open(name string) (fs.File, error) {
	data, ok := m[name]
	if !ok {
		if !fs.ValidPath(name) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{Reader: bytes.NewReader(data), name: name, size: int64(len(data))}, nil
}

type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f}, nil }
func (f *memFile) Close() error               { return nil }

type memInfo struct{ f *memFile }

func (i memInfo) Name() string       { return i.f.name }
func (i memInfo) Size() int64        { return i.f.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
