package hub

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the public Hub.
const DefaultEndpoint = "https://huggingface.co"

// Env is the part of the environment huggingface_hub reads that matters
// here, resolved with its precedence rules (constants.py, _auth.py), so
// that Python tools and islkit find the same cache and the same token.
type Env struct {
	Endpoint string // $HF_ENDPOINT without a trailing slash
	CacheDir string // the hub cache: models--ORG--NAME live here
	Token    string // "" for anonymous
	// TokenFrom says where Token came from ("HF_TOKEN", a file path), for
	// messages.
	TokenFrom string
	Offline   bool // HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is true
	// EtagTimeout bounds a HEAD ($HF_HUB_ETAG_TIMEOUT, seconds);
	// DownloadTimeout a download receiving nothing
	// ($HF_HUB_DOWNLOAD_TIMEOUT). 0: huggingface_hub's 10 s.
	EtagTimeout, DownloadTimeout time.Duration
}

// FromEnv reads the environment.
func FromEnv() Env {
	e := Env{
		Endpoint: strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"),
		CacheDir: CacheDir(),
		Offline:  isTrue(os.Getenv("HF_HUB_OFFLINE")) || (os.Getenv("HF_HUB_OFFLINE") == "" && isTrue(os.Getenv("TRANSFORMERS_OFFLINE"))),
	}
	if e.Endpoint == "" {
		e.Endpoint = DefaultEndpoint
	}
	e.Token, e.TokenFrom = token()
	e.EtagTimeout = seconds(os.Getenv("HF_HUB_ETAG_TIMEOUT"))
	e.DownloadTimeout = seconds(os.Getenv("HF_HUB_DOWNLOAD_TIMEOUT"))
	return e
}

// seconds parses a positive whole number of seconds; anything else is 0.
func seconds(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// ProgressDisabled is $HF_HUB_DISABLE_PROGRESS_BARS, which huggingface_hub
// honours too.
func ProgressDisabled() bool { return isTrue(os.Getenv("HF_HUB_DISABLE_PROGRESS_BARS")) }

// isTrue is huggingface_hub's _is_true: 1, ON, YES, TRUE in any case.
func isTrue(v string) bool {
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// hfHome is $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
// ~/.cache/huggingface.
func hfHome() string {
	if d := os.Getenv("HF_HOME"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "huggingface")
}

// CacheDir is the hub cache: $HF_HUB_CACHE, else the legacy
// $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub.
func CacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HUGGINGFACE_HUB_CACHE"); d != "" {
		return d
	}
	return filepath.Join(hfHome(), "hub")
}

// token is $HF_TOKEN (or the legacy $HUGGING_FACE_HUB_TOKEN), else the
// file $HF_TOKEN_PATH, else $HF_HOME/token, cleaned as huggingface_hub
// cleans it (line breaks removed, spaces trimmed).
func token() (tok, from string) {
	for _, name := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := cleanToken(os.Getenv(name)); t != "" {
			return t, "$" + name
		}
	}
	path := os.Getenv("HF_TOKEN_PATH")
	if path == "" {
		path = filepath.Join(hfHome(), "token")
	}
	data, err := readLimited(path, 64<<10)
	if err != nil {
		return "", ""
	}
	if t := cleanToken(string(data)); t != "" {
		return t, path
	}
	return "", ""
}

func cleanToken(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", "")
	return strings.TrimSpace(s)
}

// readLimited reads a small file, refusing one larger than limit (a
// token or ref file is a few bytes; a huge one is not ours).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}
