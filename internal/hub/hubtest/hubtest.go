// Package hubtest is a loopback stand-in for the Hugging Face Hub, for
// tests: it answers /{org}/{name}/resolve/{revision}/{file} as the real
// Hub does (X-Repo-Commit, quoted ETags, X-Error-Code and X-Error-Message
// on errors, 401/403 for private and gated repos, a relative redirect for
// a renamed repo) and sends large ("LFS") files through a second server
// standing for the CDN, with X-Linked-Etag and X-Linked-Size on the
// redirect. Both listen on 127.0.0.1 only.
package hubtest

import (
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one request either server received.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string // escaped, without the query
	Auth   string // the Authorization header
}

// Repo is one model repository.
type Repo struct {
	ID      string
	Private bool // RepoNotFound unless the token was granted
	Gated   bool // GatedRepo unless the token was granted
	// Granted lists the tokens with access to a private or gated repo.
	Granted map[string]bool

	s        *Server
	branches map[string]string            // branch or tag -> commit
	commits  map[string]map[string][]byte // commit -> path -> content
	seq      int
}

// RepoOption sets a repository's access when it is added: under the
// server's lock, so a request from another process (which the race
// detector cannot see as coming after the test's writes) reads it safely.
type RepoOption func(*Repo)

// Gated makes the repository answer GatedRepo unless the token was granted.
func Gated(r *Repo) { r.Gated = true }

// Private makes the repository answer RepoNotFound unless the token was
// granted.
func Private(r *Repo) { r.Private = true }

// Server is the stand-in Hub and its CDN.
type Server struct {
	Hub, CDN *httptest.Server
	// LFSThreshold: files of at least this many bytes are LFS files,
	// served through the CDN (default 1 MiB).
	LFSThreshold int
	// Tokens are the tokens the Hub knows; any other one is refused with
	// 401 "Invalid credentials in Authorization header".
	Tokens map[string]bool
	// HoldCDN, when above 1, makes the CDN hold each download until that
	// many are in flight (or a few seconds passed), so that concurrent
	// downloads really overlap.
	HoldCDN int
	// CDNFault, when set, may change the bytes the CDN sends for a blob
	// (truncate, corrupt); declaredSize is sent as Content-Length.
	CDNFault func(sha string, data []byte) (body []byte, declaredSize int)
	// GETViaCDN makes the Hub answer HEAD for a small file itself (200)
	// but redirect its GET to the CDN, so that a client must drop the
	// token while following a redirect.
	GETViaCDN bool
	// CDNStall makes the CDN send half of each file and then nothing more
	// until the client gives up.
	CDNStall bool
	// Answer, when set, may answer a Hub request itself (returning true),
	// for answers the stand-in does not give on its own: an X-Error-Code
	// on an unusual status, an error code it does not know.
	Answer func(w http.ResponseWriter, r *http.Request) bool

	mu      sync.Mutex
	repos   map[string]*Repo
	renames map[string]string
	blobs   map[string][]byte // sha256 -> content, for the CDN
	log     []Request
	holding int
	release chan struct{}
}

// New starts the Hub and the CDN; both stop when the test ends.
func New(t testing.TB) *Server {
	s := &Server{LFSThreshold: 1 << 20, Tokens: map[string]bool{}, repos: map[string]*Repo{},
		renames: map[string]string{}, blobs: map[string][]byte{}, release: make(chan struct{})}
	s.Hub = httptest.NewServer(http.HandlerFunc(s.serveHub))
	s.CDN = httptest.NewServer(http.HandlerFunc(s.serveCDN))
	t.Cleanup(func() {
		s.Hub.Close()
		s.CDN.Close()
	})
	return s
}

// URL is the Hub's endpoint, for HF_ENDPOINT.
func (s *Server) URL() string { return s.Hub.URL }

// AddRepo creates a repo whose main branch holds files.
func (s *Server) AddRepo(id string, files map[string][]byte, opts ...RepoOption) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Repo{ID: id, s: s, Granted: map[string]bool{}, branches: map[string]string{}, commits: map[string]map[string][]byte{}}
	for _, o := range opts {
		o(r)
	}
	s.repos[id] = r
	r.commitLocked("main", files)
	return r
}

// Rename makes the Hub answer for old with a relative redirect to repo
// id, as it does after a repo is renamed.
func (s *Server) Rename(old, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renames[old] = id
}

// Commit adds a commit holding files on branch and returns its id.
func (r *Repo) Commit(branch string, files map[string][]byte) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.commitLocked(branch, files)
}

// Tag points name at commit.
func (r *Repo) Tag(name, commit string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.branches[name] = commit
}

// Head is the commit branch is at.
func (r *Repo) Head(branch string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.branches[branch]
}

func (r *Repo) commitLocked(branch string, files map[string][]byte) string {
	r.seq++
	sum := sha1.Sum([]byte(fmt.Sprintf("%s commit %d", r.ID, r.seq)))
	commit := hex.EncodeToString(sum[:])
	copied := map[string][]byte{}
	for name, data := range files {
		copied[name] = append([]byte(nil), data...)
		if len(data) >= r.s.LFSThreshold {
			r.s.blobs[SHA256(data)] = copied[name]
		}
	}
	r.commits[commit] = copied
	r.branches[branch] = commit
	return commit
}

// Requests returns what both servers received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Count is the number of requests made with method to server ("hub" or
// "cdn"; "" for both).
func (s *Server) Count(server, method string) int {
	n := 0
	for _, r := range s.Requests() {
		if (server == "" || r.Server == server) && (method == "" || r.Method == method) {
			n++
		}
	}
	return n
}

// SHA256 is an LFS file's ETag.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// GitSHA1 is a git-stored file's ETag: the id of its git blob.
func GitSHA1(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) record(server string, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Server: server, Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization")})
}

// HubError answers as the Hub does on an error: X-Error-Code (when code
// is not ""), X-Error-Message and a JSON body.
func HubError(w http.ResponseWriter, status int, code, msg string) { hubError(w, status, code, msg) }

func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{%q:%q}\n", "error", msg)
}

func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) {
	s.record("hub", r)
	if s.Answer != nil && s.Answer(w, r) {
		return
	}
	if r.Method != http.MethodHead && r.Method != http.MethodGet {
		hubError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return
	}
	segs := strings.Split(r.URL.EscapedPath(), "/")
	if len(segs) < 6 || segs[0] != "" || segs[3] != "resolve" {
		hubError(w, http.StatusNotFound, "", "Not found")
		return
	}
	id := segs[1] + "/" + segs[2]
	rev, err1 := url.PathUnescape(segs[4])
	file, err2 := url.PathUnescape(strings.Join(segs[5:], "/"))
	if err1 != nil || err2 != nil {
		hubError(w, http.StatusBadRequest, "", "Bad request")
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if r.Header.Get("Authorization") != "" && !s.knownToken(token) {
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return
	}

	s.mu.Lock()
	if to, ok := s.renames[id]; ok {
		s.mu.Unlock()
		w.Header().Set("Location", "/"+to+"/"+strings.Join(segs[3:], "/"))
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	repo := s.repos[id]
	var commit string
	var files map[string][]byte
	var granted, private, gated bool
	if repo != nil {
		granted = repo.Granted[token] && token != ""
		private, gated = repo.Private, repo.Gated
		commit = rev
		if c, ok := repo.branches[rev]; ok {
			commit = c
		}
		files = repo.commits[commit]
	}
	s.mu.Unlock()

	switch {
	case repo == nil || (private && !granted):
		// The Hub does not tell a private repo from a missing one.
		status := http.StatusNotFound
		if token == "" {
			status = http.StatusUnauthorized
		}
		hubError(w, status, "RepoNotFound", "Repository not found")
		return
	case gated && !granted:
		if token == "" {
			hubError(w, http.StatusUnauthorized, "GatedRepo", fmt.Sprintf("Access to model %s is restricted. You must have access to it and be authenticated to access it. Please log in.", id))
		} else {
			hubError(w, http.StatusForbidden, "GatedRepo", fmt.Sprintf("Access to model %s is restricted and you are not in the authorized list. Visit https://huggingface.co/%s to ask for access.", id, id))
		}
		return
	case files == nil:
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	data, ok := files[file]
	if !ok {
		hubError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
		return
	}
	w.Header().Set("Accept-Ranges", "bytes")
	if len(data) >= s.LFSThreshold {
		sha := SHA256(data)
		pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha, len(data))
		w.Header().Set("ETag", `"`+GitSHA1([]byte(pointer))+`"`)
		w.Header().Set("X-Linked-Etag", `"`+sha+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
		w.Header().Set("Location", s.CDN.URL+"/repos/"+sha[:2]+"/"+sha[2:4]+"/"+sha+"?X-Amz-Signature=stand-in&Expires=1")
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(data)+`"`)
	if r.Method == http.MethodGet && s.GETViaCDN {
		sha := SHA256(data)
		s.mu.Lock()
		s.blobs[sha] = data
		s.mu.Unlock()
		w.Header().Set("Location", s.CDN.URL+"/repos/"+sha+"?X-Amz-Signature=stand-in")
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		// The Hub compresses text files for clients that accept it; the
		// size is then only in the HEAD's Content-Length.
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(data)
		zw.Close()
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		w.Write(data)
	}
}

func (s *Server) knownToken(t string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Tokens[t]
}

func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	s.record("cdn", r)
	segs := strings.Split(r.URL.Path, "/")
	sha := segs[len(segs)-1]
	s.mu.Lock()
	data, ok := s.blobs[sha]
	fault, stall := s.CDNFault, s.CDNStall
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("X-Amz-Signature") == "" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintln(w, "<Error><Code>AccessDenied</Code></Error>")
		return
	}
	if r.Method == http.MethodGet {
		s.hold()
	}
	body, size := data, len(data)
	if fault != nil {
		body, size = fault(sha, data)
	}
	w.Header().Set("ETag", `"`+sha+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.Header().Set("Content-Type", "application/octet-stream")
	if r.Method == http.MethodGet && stall {
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

// hold blocks a download until HoldCDN of them are waiting, or a few
// seconds passed (the test still checks the cache, not the timing).
func (s *Server) hold() {
	s.mu.Lock()
	if s.HoldCDN < 2 {
		s.mu.Unlock()
		return
	}
	s.holding++
	release := s.release
	if s.holding >= s.HoldCDN {
		close(s.release)
		s.release = make(chan struct{})
		s.holding = 0
	}
	s.mu.Unlock()
	select {
	case <-release:
	case <-time.After(5 * time.Second):
	}
}

// Files lists a commit's paths, sorted.
func (r *Repo) Files(commit string) []string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []string
	for name := range r.commits[commit] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
