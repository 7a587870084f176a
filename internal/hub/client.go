// Package hub resolves model files from the Hugging Face Hub the way
// huggingface_hub's hf_hub_download does, into the same cache, so that
// Python tools and islkit share downloads: a pinned commit already cached
// is used without any network; otherwise each file's metadata comes from a
// HEAD of {endpoint}/{repo}/resolve/{revision}/{file} (X-Repo-Commit, the
// ETag naming the blob, the size), the content from a GET of where that
// HEAD points (a CDN for large files), checked against the size and, for
// LFS files, the SHA-256, and renamed into the cache. HF_HUB_OFFLINE, or a
// Hub that cannot be reached, falls back to the cached snapshot of the
// revision.
package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultMaxFileSize bounds one downloaded file. The largest tokenizer.json
// files on the Hub are tens of MB; a server announcing more is refused
// before any byte is written.
const DefaultMaxFileSize = 512 << 20

// File is one file of a repo to resolve.
type File struct {
	Name     string // slash path in the repo, e.g. tokenizer.json
	Optional bool   // a 404 EntryNotFound is normal
}

// Snapshot is a resolved revision: a folder holding the files found.
type Snapshot struct {
	Dir    string // the cache's snapshots/<commit>
	Commit string
	// Downloaded counts the bytes fetched by this resolution (0 when the
	// cache had everything).
	Downloaded int64
}

// Client resolves repos. The zero value with Env filled is ready to use.
type Client struct {
	Env
	// HTTP sends the requests; nil uses a client with the Hub's timeouts.
	HTTP *http.Client
	// Progress, when not nil, receives a progress line per download
	// (bytes, rate), rewritten in place with \r.
	Progress io.Writer
	// Warn, when not nil, receives one-line warnings (a cached snapshot
	// used because the Hub could not be reached).
	Warn func(msg string)
	// MaxFileSize bounds each file; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// UserAgent is sent with every request.
	UserAgent string
}

// New is a client configured from the environment.
func New() *Client { return &Client{Env: FromEnv()} }

// meta is what a HEAD tells about one file.
type meta struct {
	commit, etag string
	size         int64
	location     string // where to GET it
	keepAuth     bool   // location is on the endpoint's host
}

// Snapshot makes sure the files of repo at revision are in the cache and
// returns their snapshot folder. files[0] is resolved first and must not
// be optional; the others are then resolved at the commit it named, so
// the snapshot is one commit even if the branch moves meanwhile.
func (c *Client) Snapshot(ctx context.Context, repo, revision string, files []File) (*Snapshot, error) {
	org, name, err := ParseRepoID(repo)
	if err != nil {
		return nil, err
	}
	if revision == "" {
		revision = DefaultRevision
	}
	if err := CheckRevision(revision); err != nil {
		return nil, err
	}
	if len(files) == 0 || files[0].Optional {
		return nil, errors.New("hub: the first file must be a required one")
	}
	for _, f := range files {
		if err := checkRelPath(f.Name); err != nil {
			return nil, fmt.Errorf("file name %q: %v", f.Name, err)
		}
	}
	rc := repoCache{dir: filepath.Join(c.cacheDir(), repoFolder(org, name))}
	base := &Error{Repo: repo, Revision: revision, Endpoint: c.endpoint(), TokenFrom: c.TokenFrom, CacheDir: rc.dir}

	// The snapshot of the revision as the cache has it, if complete.
	cached := func() (string, bool) {
		commit, ok := rc.ref(revision)
		if !ok {
			return "", false
		}
		for _, f := range files {
			if !f.Optional && !rc.hasFile(commit, f.Name) {
				return "", false
			}
		}
		return commit, true
	}
	if commit, ok := cached(); ok && IsCommit(revision) {
		return &Snapshot{Dir: rc.snapshotDir(commit), Commit: commit}, nil
	}
	if c.Offline {
		if commit, ok := cached(); ok {
			return &Snapshot{Dir: rc.snapshotDir(commit), Commit: commit}, nil
		}
		e := *base
		e.Kind, e.Cached = Offline, rc.snapshots()
		return nil, &e
	}

	snap := &Snapshot{}
	for i, f := range files {
		at := revision
		if i > 0 {
			at = snap.Commit
			if rc.hasFile(at, f.Name) || (f.Optional && rc.noExist(at, f.Name)) {
				continue
			}
		}
		m, err := c.head(ctx, base, at, f.Name)
		if err != nil {
			var he *Error
			if errors.As(err, &he) && he.Kind == EntryNotFound && f.Optional {
				if commit := snap.Commit; commit != "" {
					_ = rc.markNoExist(commit, f.Name) // a cache we cannot write only costs a HEAD next time
				}
				continue
			}
			if fallsBack(err) {
				if commit, ok := cached(); ok {
					c.warn(fmt.Sprintf("%s; using the cached snapshot %s of %s (revision %s)", he.reason(), commit, repo, revision))
					return &Snapshot{Dir: rc.snapshotDir(commit), Commit: commit}, nil
				}
				if he != nil && he.Kind == Unreachable {
					he.Cached = rc.snapshots()
				}
			}
			return nil, err
		}
		if i == 0 {
			snap.Commit = m.commit
			snap.Dir = rc.snapshotDir(m.commit)
			if err := rc.writeRef(revision, m.commit); err != nil && !rc.hasFile(m.commit, f.Name) {
				return nil, fmt.Errorf("hub cache: %w", err)
			}
		} else if m.commit != snap.Commit {
			e := *base
			e.Kind, e.URL = BadResponse, c.resolveURL(repo, at, f.Name)
			e.Message = fmt.Sprintf("X-Repo-Commit %s for a file requested at commit %s", m.commit, snap.Commit)
			return nil, &e
		}
		n, err := c.fetch(ctx, base, rc, snap.Commit, f.Name, m)
		snap.Downloaded += n
		if err != nil {
			return nil, err
		}
	}
	return snap, nil
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(c.Endpoint, "/")
}

func (c *Client) cacheDir() string {
	if c.CacheDir == "" {
		return CacheDir()
	}
	return c.CacheDir
}

func (c *Client) maxSize() int64 {
	if c.MaxFileSize > 0 {
		return c.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (c *Client) warn(msg string) {
	if c.Warn != nil {
		c.Warn(msg)
	}
}

// resolveURL is hf_hub_url: the revision quoted whole (a/b becomes a%2Fb),
// the file path segment by segment.
func (c *Client) resolveURL(repo, rev, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.endpoint() + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(segs, "/")
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

var defaultHTTP = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t}
}()

func (c *Client) headers(req *http.Request) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "islkit (hf_hub-compatible)"
	}
	req.Header.Set("User-Agent", ua)
}

// head reads one file's metadata as get_hf_file_metadata does: redirects
// within the Hub (a renamed repo answers with a relative Location) are
// followed, a redirect to another host (the CDN of a large file) is not:
// its Location is where to GET the file, and the Hub's own headers
// (X-Linked-Etag, X-Linked-Size) describe it.
func (c *Client) head(ctx context.Context, base *Error, rev, file string) (*meta, error) {
	timeout := c.EtagTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	target := c.resolveURL(base.Repo, rev, file)
	hc := *c.client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hops := 0; ; hops++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, target, nil)
		if err != nil {
			return nil, err
		}
		c.headers(req)
		// The real size, not a compressed one.
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := hc.Do(req)
		if err != nil {
			e := *base
			e.Kind, e.File, e.URL, e.Err = Unreachable, file, target, unwrapURLError(err)
			return nil, &e
		}
		resp.Body.Close()
		fail := func(msg string) (*meta, error) {
			e := *base
			e.Kind, e.File, e.URL, e.Status, e.Message = BadResponse, file, target, resp.StatusCode, msg
			return nil, &e
		}
		// X-Error-Code is read on every status: whatever the status, an
		// answer that carries one is the Hub saying what is wrong.
		if resp.StatusCode >= 400 || resp.Header.Get("X-Error-Code") != "" {
			return nil, classify(base, resp, rev, file, target)
		}
		redirect := resp.StatusCode >= 300 && resp.StatusCode < 400
		location := target
		if redirect {
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.Header.Get("Location") == "" {
				return fail(fmt.Sprintf("HTTP %d without a usable Location", resp.StatusCode))
			}
			if loc.Host == "" && loc.Scheme == "" {
				if hops >= 10 {
					return fail("more than 10 redirects")
				}
				u, _ := url.Parse(target)
				u.Path, u.RawPath = loc.Path, loc.RawPath
				target = u.String()
				continue
			}
			if loc.Scheme != "https" && loc.Scheme != "http" {
				return fail(fmt.Sprintf("redirect to %q", loc.Redacted()))
			}
			location = loc.String()
		}
		m := &meta{location: location}
		m.commit = resp.Header.Get("X-Repo-Commit")
		if !IsCommit(m.commit) {
			return fail(fmt.Sprintf("no commit id in X-Repo-Commit (got %q): is HF_ENDPOINT (%s) a Hugging Face Hub?", m.commit, c.endpoint()))
		}
		etag := resp.Header.Get("X-Linked-Etag")
		if etag == "" {
			etag = resp.Header.Get("ETag")
		}
		m.etag = normalizeEtag(etag)
		if !etagRe.MatchString(m.etag) {
			return fail(fmt.Sprintf("no usable ETag (got %q)", etag))
		}
		size := resp.Header.Get("X-Linked-Size")
		if size == "" && !redirect {
			size = resp.Header.Get("Content-Length")
		}
		if m.size, err = strconv.ParseInt(size, 10, 64); err != nil || m.size < 0 {
			return fail(fmt.Sprintf("no file size (X-Linked-Size or Content-Length: %q)", size))
		}
		if m.size > c.maxSize() {
			return fail(fmt.Sprintf("%s is %d bytes, more than the %d allowed", file, m.size, c.maxSize()))
		}
		lu, _ := url.Parse(location)
		eu, _ := url.Parse(c.endpoint())
		m.keepAuth = lu != nil && eu != nil && lu.Host == eu.Host
		return m, nil
	}
}

// classify turns a failed Hub answer into an Error, reading X-Error-Code
// as hf_raise_for_status does.
func classify(base *Error, resp *http.Response, rev, file, target string) error {
	e := *base
	e.File, e.URL, e.Status = file, target, resp.StatusCode
	e.Message = resp.Header.Get("X-Error-Message")
	if e.Revision == "" {
		e.Revision = rev
	}
	code := resp.Header.Get("X-Error-Code")
	e.Code = code
	switch {
	case code == "RevisionNotFound":
		e.Kind = RevisionNotFound
	case code == "EntryNotFound":
		e.Kind = EntryNotFound
	case code == "GatedRepo":
		e.Kind = Gated
	case code == "RepoNotFound" || code == "RepositoryNotFound":
		// huggingface_hub's RepositoryNotFoundError; the Hub spells the
		// code RepoNotFound.
		e.Kind = RepoNotFound
	case resp.StatusCode == 401 && e.Message == "Invalid credentials in Authorization header" && e.TokenFrom != "":
		e.Kind = BadToken
	case resp.StatusCode == 401:
		// The Hub answers 401 for missing, private and gated repos alike.
		e.Kind = RepoNotFound
	case resp.StatusCode == 403:
		e.Kind = Forbidden
	default:
		e.Kind = HTTPStatus
	}
	return &e
}

// fetch downloads one file into the blob m names (unless it is there) and
// links it into the snapshot. It returns the bytes downloaded.
func (c *Client) fetch(parent context.Context, base *Error, rc repoCache, commit, file string, m *meta) (int64, error) {
	if rc.hasFile(commit, file) {
		return 0, nil
	}
	if rc.blobSize(m.etag) == m.size {
		return 0, rc.link(commit, file, m.etag)
	}
	fail := func(status int, msg string) (int64, error) {
		e := *base
		e.Kind, e.File, e.URL, e.Status, e.Message = BadResponse, file, redact(m.location), status, msg
		return 0, &e
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.location, nil)
	if err != nil {
		return fail(0, err.Error())
	}
	c.headers(req)
	if !m.keepAuth {
		// A CDN URL is signed; the token is not for it.
		req.Header.Del("Authorization")
	}
	hc := *c.client()
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		// Go keeps the header across ports of one host; the token goes
		// only where it was sent first.
		if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
			req.Header.Del("Authorization")
		}
		return nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		if parent.Err() != nil {
			return 0, parent.Err()
		}
		return fail(0, fmt.Sprintf("download of %s failed: %v", file, unwrapURLError(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Error-Code") != "" {
		if resp.Header.Get("X-Error-Code") != "" {
			return 0, classify(base, resp, commit, file, redact(m.location))
		}
		return fail(resp.StatusCode, fmt.Sprintf("download answered HTTP %d", resp.StatusCode))
	}
	tmp, err := rc.incompleteBlob(m.etag)
	if err != nil {
		return 0, fmt.Errorf("hub cache: %w", err)
	}
	discard := func() { tmp.Close(); os.Remove(tmp.Name()) }

	idle := c.DownloadTimeout
	if idle == 0 {
		idle = 10 * time.Second
	}
	var stalled atomic.Bool
	watchdog := time.AfterFunc(idle, func() { stalled.Store(true); cancel() })
	defer watchdog.Stop()
	var h hash.Hash
	if sha256Re.MatchString(m.etag) {
		h = sha256.New()
	}
	bar := newProgress(c.Progress, base.Repo+" "+file, m.size)
	w := io.Writer(tmp)
	if h != nil {
		w = io.MultiWriter(tmp, h)
	}
	n, err := io.Copy(w, &countingReader{r: io.LimitReader(resp.Body, m.size+1), watchdog: watchdog, idle: idle, bar: bar})
	bar.done(n)
	if err != nil {
		discard()
		if parent.Err() != nil {
			return n, parent.Err()
		}
		if stalled.Load() {
			err = fmt.Errorf("no data for %v", idle)
		}
		_, err := fail(resp.StatusCode, fmt.Sprintf("download of %s interrupted after %d of %d bytes: %v; nothing cached", file, n, m.size, unwrapURLError(err)))
		return n, err
	}
	if n != m.size {
		discard()
		_, err := fail(resp.StatusCode, fmt.Sprintf("downloaded %d bytes of %s, the Hub announced %d: incomplete or corrupt download, nothing cached", n, file, m.size))
		return n, err
	}
	if h != nil {
		if sum := hex.EncodeToString(h.Sum(nil)); sum != m.etag {
			discard()
			_, err := fail(resp.StatusCode, fmt.Sprintf("%s has SHA-256 %s, its ETag says %s: corrupt download, nothing cached", file, sum, m.etag))
			return n, err
		}
	}
	if err := rc.installBlob(tmp, m.etag); err != nil {
		return n, fmt.Errorf("hub cache: %w", err)
	}
	if err := rc.link(commit, file, m.etag); err != nil {
		return n, fmt.Errorf("hub cache: %w", err)
	}
	return n, nil
}

// redact drops a signed URL's query (it holds credentials for the CDN).
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}

// countingReader feeds the progress line and keeps the idle watchdog
// from firing while bytes arrive.
type countingReader struct {
	r        io.Reader
	n        int64
	watchdog *time.Timer
	idle     time.Duration
	bar      *progress
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.n += int64(n)
		r.watchdog.Reset(r.idle)
		r.bar.update(r.n)
	}
	return n, err
}

// unwrapURLError drops url.Error's "Get URL:" prefix: the URL may be
// signed, and the message names it already (redacted).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
