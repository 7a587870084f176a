// Package modelsrc finds a model's tokenizer files from what a user passes
// as --tokenizer: a tokenizer.json file, a model folder, a Hugging Face Hub
// id (through the shared cache, downloaded by internal/hub when missing),
// or nothing for the embedded default (Qwen3). Every tool resolves models through it, so they agree on what a
// name means.
package modelsrc

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/hub"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/version"
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
// embedded default), a tokenizer.json path, a folder, or a Hugging Face
// Hub model ORG/NAME, optionally ORG/NAME@REVISION (see Spec), resolved
// like huggingface_hub does through the shared cache (internal/hub):
// downloaded when missing, never touching the network for a cached
// pinned commit or under HF_HUB_OFFLINE=1.
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
	id, rev, hasRev := strings.Cut(spec, "@")
	if hasRev {
		if id == "" {
			return nil, fmt.Errorf("--revision %s needs --tokenizer ORG/NAME", rev)
		}
		if _, err := os.Stat(id); err == nil {
			return nil, fmt.Errorf("--revision %s: only for an ORG/NAME model from the Hub, and %s is a local path", rev, id)
		}
	}
	if looksLikeHubID(id) {
		dir, err := hubSnapshot(id, rev)
		if err != nil {
			var he *hub.Error
			if errors.As(err, &he) && he.Kind == hub.RepoNotFound {
				// ORG/NAME may also have been meant as a folder.
				return nil, fmt.Errorf("--tokenizer %s: %w; nor is there a local file or folder %s", spec, err, id)
			}
			return nil, fmt.Errorf("--tokenizer %s: %w", spec, err)
		}
		return fromDir(spec, dir)
	}
	return nil, cli.Usagef("--tokenizer %s: no such file or folder, and not an ORG/NAME model id", spec)
}

// Spec joins --tokenizer and --revision into the one string Resolve takes
// and records keep: ORG/NAME@REVISION, or the tokenizer alone for the
// default revision (main) so that records and local paths stay as given.
func Spec(tokenizer, revision string) string {
	if revision == "" || revision == hub.DefaultRevision {
		return tokenizer
	}
	return tokenizer + "@" + revision
}

func fromDir(name, dir string) (*Source, error) {
	path := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		return nil, cli.Usagef("%s: no tokenizer.json in this folder", dir) // a bad --tokenizer: exit 2
	}
	return &Source{Name: name, Dir: dir, FS: os.DirFS(dir), TokenizerFile: path}, nil
}

// looksLikeHubID tells ORG/NAME from a path that does not exist: one
// slash, neither side empty, not starting with a dot. Whether it is a
// valid id is hub.ParseRepoID's to say, with a message.
func looksLikeHubID(s string) bool {
	org, name, ok := strings.Cut(s, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") && !strings.HasPrefix(s, ".")
}

// HubCacheDir is where the HuggingFace hub cache lives on this machine.
func HubCacheDir() string { return hub.CacheDir() }

// HubFiles are the files of a Hub model that islkit reads: the tokenizer
// and its config (required), the chat template file, the image processing
// of a vision-language model (preprocessor_config.json,
// processor_config.json, read with config.json: internal/vision), and the
// files transformers reads beside them (fetched, as AutoTokenizer does, so
// the cache serves Python tools too).
var HubFiles = []hub.File{
	{Name: "tokenizer.json"},
	{Name: "tokenizer_config.json"},
	{Name: "chat_template.jinja", Optional: true},
	{Name: "special_tokens_map.json", Optional: true},
	{Name: "generation_config.json", Optional: true},
	{Name: "config.json", Optional: true},
	{Name: "preprocessor_config.json", Optional: true},
	{Name: "processor_config.json", Optional: true},
}

// Stderr receives the Hub's warnings and, on a terminal (unless
// HF_HUB_DISABLE_PROGRESS_BARS is set), the download progress.
var Stderr io.Writer = os.Stderr

// hubSnapshot resolves a Hub model to its snapshot folder in the cache.
func hubSnapshot(id, rev string) (string, error) {
	c := hub.New()
	prog := filepath.Base(os.Args[0])
	c.Warn = func(msg string) { fmt.Fprintf(Stderr, "%s: warning: %s\n", prog, msg) }
	if isTerminal(Stderr) && !hub.ProgressDisabled() {
		c.Progress = Stderr
	}
	c.UserAgent = "islkit/" + version.String()
	snap, err := c.Snapshot(context.Background(), id, rev, HubFiles)
	if err != nil {
		return "", err
	}
	return snap.Dir, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Default returns the embedded Qwen3 tokenizer folder.
func Default() (*Source, error) { return defaultSource() }

// defaultSource resolves the embedded model once per process: its files
// are part of the binary and never change, so every Default — each tool
// run in-process, every test — shares one parsed tokenizer.
var defaultSource = sync.OnceValues(loadDefault)

func loadDefault() (*Source, error) {
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
