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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/hub"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/version"

	json "github.com/goccy/go-json"
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
	// Format is the tokenizer file's format: FormatHF (tokenizer.json,
	// the zero value), FormatTekken (Mistral's tekken.json) or
	// FormatTiktoken (a tiktoken rank file).
	Format Format
	// tokName is the tokenizer file's name in FS ("tokenizer.json" when
	// empty).
	tokName string
	// AsTransformers5, set before Tokenizer is first called, builds the
	// tokenizer as transformers 5 does (the vllm profile: vLLM 0.32
	// requires transformers>=5.16.1,<5.20): a Llama-class tokenizer_config
	// gets LlamaTokenizer's pipeline, not tokenizer.json's
	// (Transformers5Issue). Build then says so.
	AsTransformers5 bool
	// build is Build's value, set by Tokenizer.
	build string

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
		dir, base := filepath.Dir(spec), filepath.Base(spec)
		if f := formatOf(base); f != FormatHF {
			return &Source{Name: spec, Dir: dir, FS: os.DirFS(dir), TokenizerFile: spec, Format: f, tokName: base}, nil
		}
		return &Source{Name: spec, Dir: dir, FS: singleFileFS{dir: dir, file: base}, TokenizerFile: spec}, nil
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
	if _, err := os.Stat(path); err == nil {
		return &Source{Name: name, Dir: dir, FS: os.DirFS(dir), TokenizerFile: path}, nil
	}
	// Without a tokenizer.json, the files Mistral's and tiktoken-based
	// models ship, in the order vLLM's tokenizer loaders look for them.
	if file := otherTokenizerFile(dir); file != "" {
		if formatOf(file) == FormatTekken {
			if err := CheckParams(dir); err != nil {
				return nil, err
			}
		}
		return &Source{Name: name, Dir: dir, FS: os.DirFS(dir), TokenizerFile: filepath.Join(dir, file), Format: formatOf(file), tokName: file}, nil
	}
	return nil, cli.Usagef("%s: no tokenizer.json (nor tekken.json, one tokenizer.model.v*, tiktoken.model or *.tiktoken) in this folder", dir) // a bad --tokenizer: exit 2
}

// Format is a tokenizer file's format.
type Format int

const (
	FormatHF            Format = iota // Hugging Face tokenizer.json
	FormatTekken                      // Mistral's tekken.json (mistral-common)
	FormatTiktoken                    // a tiktoken rank file: *.tiktoken, tiktoken.model
	FormatSentencePiece               // mistral-common's SentencePiece model: tokenizer.model.v*
)

// formatOf tells a tokenizer file's format by its name, as
// mistral-common's is_tekken ("tekken" in a .json name) and tiktoken-based
// loaders (a .tiktoken file, tiktoken.model) do.
func formatOf(name string) Format {
	switch {
	case strings.Contains(name, "tekken") && strings.HasSuffix(name, ".json"):
		return FormatTekken
	case strings.HasSuffix(name, ".tiktoken") || name == "tiktoken.model":
		return FormatTiktoken
	case spVersion(name) != "":
		return FormatSentencePiece
	}
	return FormatHF
}

// otherTokenizerFile names the tekken or tiktoken file of a folder without
// tokenizer.json, or "".
func otherTokenizerFile(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "tekken.json")); err == nil {
		return "tekken.json"
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "tokenizer.model.v*")); len(m) == 1 {
		// One mistral-common SentencePiece model (several: the user names
		// the one, as a file).
		return filepath.Base(m[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "tiktoken.model")); err == nil {
		return "tiktoken.model"
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tiktoken")); len(m) > 0 {
		return filepath.Base(m[0]) // sorted: the same one every run
	}
	return ""
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

// Without tokenizer.json, a Hub model is looked for in the other formats,
// each list's first file required. The Hub client lists no folders, so
// tokenizer.model.v* and *.tiktoken are the names real repos use.
var (
	// MistralHubFiles: mistral-common's files (Tekken, its params and the
	// SentencePiece versions it reads).
	MistralHubFiles = append([]hub.File{{Name: "tekken.json"}, {Name: "params.json", Optional: true}},
		optional("tokenizer_config.json", "chat_template.jinja", "config.json", "generation_config.json",
			"tokenizer.model.v1", "tokenizer.model.v2", "tokenizer.model.v3", "tokenizer.model.v7", "tokenizer.model.v7m1",
			"tokenizer.model.v11", "tokenizer.model.v13")...)
	// TiktokenHubFiles: a tiktoken rank file and the config naming its
	// pattern's module (fetched next, see hubSnapshot).
	TiktokenHubFiles = [][]hub.File{
		append([]hub.File{{Name: "tiktoken.model"}}, optional(tiktokenCompanions...)...),
		append([]hub.File{{Name: "o200k_base.tiktoken"}}, optional(tiktokenCompanions...)...),
		append([]hub.File{{Name: "cl100k_base.tiktoken"}}, optional(tiktokenCompanions...)...),
	}
	tiktokenCompanions = []string{"tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json", "generation_config.json", "config.json"}
)

func optional(names ...string) []hub.File {
	out := make([]hub.File, len(names))
	for i, n := range names {
		out[i] = hub.File{Name: n, Optional: true}
	}
	return out
}

// Stderr receives the Hub's warnings and, on a terminal (unless
// HF_HUB_DISABLE_PROGRESS_BARS is set), the download progress.
var Stderr io.Writer = os.Stderr

// hubSnapshot resolves a Hub model to its snapshot folder in the cache.
func hubSnapshot(id, rev string) (string, error) {
	c := newHubClient()
	ctx := context.Background()
	snap, err := c.Snapshot(ctx, id, rev, HubFiles)
	if err == nil {
		return snap.Dir, nil
	}
	var he *hub.Error
	if !errors.As(err, &he) || (he.Kind != hub.EntryNotFound && he.Kind != hub.Offline) {
		return "", err
	}
	// No tokenizer.json (or none cached, offline): another format's files.
	for _, files := range append([][]hub.File{MistralHubFiles}, TiktokenHubFiles...) {
		other, oerr := c.Snapshot(ctx, id, rev, files)
		var oe *hub.Error
		if oerr != nil && errors.As(oerr, &oe) && (oe.Kind == hub.EntryNotFound || oe.Kind == hub.Offline) {
			continue
		}
		if oerr != nil {
			return "", oerr
		}
		if files[0].Name != "tekken.json" {
			if err := fetchTokenizerModule(ctx, c, id, other); err != nil {
				return "", err
			}
		}
		return other.Dir, nil
	}
	return "", err // the tokenizer.json error: what most repos have
}

// newHubClient is the Hub client of the tools: warnings and progress on
// Stderr, islkit's user agent.
func newHubClient() *hub.Client {
	c := hub.New()
	prog := filepath.Base(os.Args[0])
	c.Warn = func(msg string) { fmt.Fprintf(Stderr, "%s: warning: %s\n", prog, msg) }
	if isTerminal(Stderr) && !hub.ProgressDisabled() {
		c.Progress = Stderr
	}
	c.UserAgent = "islkit/" + version.String()
	return c
}

// fetchTokenizerModule downloads the Python module a tiktoken model's
// tokenizer_config.json names in auto_map (its split pattern is there), at
// the snapshot's commit.
func fetchTokenizerModule(ctx context.Context, c *hub.Client, id string, snap *hub.Snapshot) error {
	raw, err := os.ReadFile(filepath.Join(snap.Dir, "tokenizer_config.json"))
	if err != nil {
		return nil // none: the file's name must say the pattern
	}
	var tc struct {
		AutoMap struct {
			AutoTokenizer json.RawMessage `json:"AutoTokenizer"`
		} `json:"auto_map"`
	}
	if json.Unmarshal(raw, &tc) != nil {
		return nil // reported, with the file named, when the tokenizer loads
	}
	module := autoTokenizerModule(tc.AutoMap.AutoTokenizer)
	if module == "" {
		return nil
	}
	_, err = c.Snapshot(ctx, id, snap.Commit, []hub.File{{Name: module + ".py"}})
	return err
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
		name := s.tokName
		if name == "" {
			name = "tokenizer.json"
		}
		data, err := fs.ReadFile(s.FS, name)
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.TokenizerFile, err)
			return
		}
		sum := sha256.Sum256(data)
		s.hash = hex.EncodeToString(sum[:])
		var tok *tokenizer.Tokenizer
		switch s.Format {
		case FormatTekken:
			tok, err = tokenizerCache().LoadTekken(data, sum)
		case FormatSentencePiece:
			tok, err = tokenizerCache().LoadSentencePiece(data, sum)
		case FormatTiktoken:
			var cfg tokenizer.TiktokenConfig
			if cfg, err = s.tiktokenConfig(name); err == nil {
				tok, err = tokenizerCache().LoadTiktoken(data, sum, cfg)
			}
		default:
			var rebuilt []byte
			if rebuilt, err = s.asTransformers5(data); err == nil {
				if rebuilt != nil {
					data, sum = rebuilt, sha256.Sum256(rebuilt)
				}
				tok, err = tokenizerCache().LoadJSON(data, sum)
			}
		}
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.TokenizerFile, err)
			return
		}
		s.tok = tok
	})
	return s.tok, s.err
}

// asTransformers5 is tokenizer.json as transformers 5 builds it when
// AsTransformers5 asks and transformers would rebuild it, nil when it is
// read as it is.
func (s *Source) asTransformers5(data []byte) ([]byte, error) {
	if !s.AsTransformers5 {
		return nil, nil
	}
	rebuilds, err := s.transformers5Rebuilds()
	if err != nil || !rebuilds {
		return nil, err
	}
	cfg, _ := fs.ReadFile(s.FS, "tokenizer_config.json")
	out, ok, err := transformers5Llama(data, cfg)
	if err != nil || !ok {
		return nil, err
	}
	s.build = Transformers5Llama
	prog := filepath.Base(os.Args[0])
	fmt.Fprintf(Stderr, "%s: warning: %s: tokenizer built as the server's transformers 5 (vLLM 0.32, SGLang 0.5.23) builds its LlamaTokenizer, not as tokenizer.json says (no normalizer, a Metaspace pre-tokenizer; %s)\n",
		prog, s.TokenizerFile, Transformers5Issue)
	return out, nil
}

// Build is how the tokenizer was built when not from its file as it is:
// Transformers5Llama, or "".
func (s *Source) Build() (string, error) {
	if _, err := s.Tokenizer(); err != nil {
		return "", err
	}
	return s.build, nil
}

// tiktokenConfig finds what a tiktoken rank file leaves out: the split
// pattern — tokenizer_config.json's "pat_str", else the pat_str of the
// Python tokenizer class its auto_map names (Kimi's tokenization_kimi.py
// joins raw strings into one), else tiktoken's own for a file named after
// one of its encodings (o200k_base.tiktoken) — and the special tokens
// (tokenizer_config.json's added_tokens_decoder, else the encoding's).
func (s *Source) tiktokenConfig(file string) (tokenizer.TiktokenConfig, error) {
	cfg, _ := tokenizer.TiktokenPreset(strings.TrimSuffix(file, ".tiktoken"))
	raw, err := fs.ReadFile(s.FS, "tokenizer_config.json")
	if err != nil {
		if cfg.Pattern == "" {
			return cfg, fmt.Errorf("%s: no split pattern: a tiktoken file needs a tokenizer_config.json beside it (pat_str, or auto_map naming the tokenizer class's module), or a name of tiktoken's encodings (o200k_base.tiktoken)", s.TokenizerFile)
		}
		return cfg, nil
	}
	var tc struct {
		PatStr  string `json:"pat_str"`
		AutoMap struct {
			AutoTokenizer json.RawMessage `json:"AutoTokenizer"`
		} `json:"auto_map"`
		AddedTokensDecoder map[string]struct {
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return cfg, fmt.Errorf("%s: %w", filepath.Join(s.Dir, "tokenizer_config.json"), err)
	}
	if tc.PatStr != "" {
		cfg.Pattern = tc.PatStr
	} else if module := autoTokenizerModule(tc.AutoMap.AutoTokenizer); module != "" {
		src, err := fs.ReadFile(s.FS, module+".py")
		if err != nil {
			return cfg, fmt.Errorf("%s: auto_map names %s.py, which is missing: %w", filepath.Join(s.Dir, "tokenizer_config.json"), module, err)
		}
		pat, ok := patStrOf(string(src))
		if !ok {
			return cfg, fmt.Errorf("%s: no `pat_str = \"|\".join([r\"\"\"...\"\"\", ...])` in it", filepath.Join(s.Dir, module+".py"))
		}
		cfg.Pattern = pat
	}
	if cfg.Pattern == "" {
		return cfg, fmt.Errorf("%s: no split pattern for %s (no pat_str, no auto_map tokenizer module)", filepath.Join(s.Dir, "tokenizer_config.json"), s.TokenizerFile)
	}
	if len(tc.AddedTokensDecoder) > 0 {
		cfg.Special = map[string]int{}
		for idStr, tok := range tc.AddedTokensDecoder {
			id, err := strconv.Atoi(idStr)
			if err != nil {
				return cfg, fmt.Errorf("%s: added_tokens_decoder: %q is not an id", filepath.Join(s.Dir, "tokenizer_config.json"), idStr)
			}
			cfg.Special[tok.Content] = id
		}
	}
	return cfg, nil
}

// autoTokenizerModule is the module of auto_map.AutoTokenizer
// (["tokenization_kimi.TikTokenTokenizer", null] → tokenization_kimi),
// or "" when there is none or it is not a plain module name.
func autoTokenizerModule(raw json.RawMessage) string {
	var names []*string
	if json.Unmarshal(raw, &names) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return ""
		}
		names = []*string{&one}
	}
	for _, n := range names {
		if n == nil {
			continue
		}
		module, _, ok := strings.Cut(*n, ".")
		if ok && module != "" && !strings.ContainsAny(module, "/\\:") && fs.ValidPath(module+".py") {
			return module
		}
	}
	return ""
}

// patStrOf reads `pat_str = "|".join([r"""a""", r"""b""", ...])` from a
// tokenizer class's Python source, the form tiktoken-based classes (Kimi's)
// write their pattern in, and joins it as Python does. Only raw
// triple-quoted strings, commas, whitespace and comments may stand in the
// list; anything else is not read.
func patStrOf(src string) (string, bool) {
	const start = `pat_str = "|".join(`
	i := strings.Index(src, start)
	if i < 0 {
		return "", false
	}
	rest := strings.TrimLeft(src[i+len(start):], " \t\r\n")
	if !strings.HasPrefix(rest, "[") {
		return "", false
	}
	rest = rest[1:]
	var parts []string
	for {
		rest = strings.TrimLeft(rest, " \t\r\n,")
		switch {
		case strings.HasPrefix(rest, "]"):
			return strings.Join(parts, "|"), len(parts) > 0
		case strings.HasPrefix(rest, "#"):
			if j := strings.IndexByte(rest, '\n'); j >= 0 {
				rest = rest[j:]
				continue
			}
			return "", false
		case strings.HasPrefix(rest, `r"""`):
			k := strings.Index(rest[4:], `"""`)
			if k < 0 {
				return "", false
			}
			parts = append(parts, rest[4:4+k])
			rest = rest[4+k+3:]
		default:
			return "", false
		}
	}
}

// TokenizerSHA256 is the hex SHA-256 of tokenizer.json, for provenance.
func (s *Source) TokenizerSHA256() (string, error) {
	if _, err := s.Tokenizer(); err != nil {
		return "", err
	}
	return s.hash, nil
}

// tokenizerCache is the cache of parsed tokenizers (tokenizer.DefaultCache:
// $ISLKIT_CACHE, else the user cache folder), warning on Stderr.
func tokenizerCache() *tokenizer.Cache {
	prog := filepath.Base(os.Args[0])
	return tokenizer.DefaultCache(func(msg string) { fmt.Fprintf(Stderr, "%s: warning: %s\n", prog, msg) })
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

// SentencePieceVersion is the mistral-common tokenizer version of a
// SentencePiece model's file name ("" when the name has none).
func SentencePieceVersion(name string) string { return spVersion(name) }

// spVersion is the tokenizer version of a mistral-common SentencePiece
// file name (tokenizer.model.v3, mistral_instruct_tokenizer_240323.model.v3:
// "v3"; "v7m1" for .model.v7m1), "" for another name.
func spVersion(name string) string {
	i := strings.LastIndex(name, ".model.v")
	if i < 0 || !strings.HasPrefix(name, "tokenizer.model.v") && !strings.Contains(name, "tokenizer_") {
		return ""
	}
	v := name[i+len(".model."):]
	if len(v) < 2 || v[1] < '0' || v[1] > '9' || strings.ContainsAny(v, "./") {
		return ""
	}
	return v
}
