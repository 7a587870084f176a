package hub

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultRevision is the branch huggingface_hub resolves when none is given.
const DefaultRevision = "main"

// commitRe is a full git commit id, as the Hub sends in X-Repo-Commit and as
// snapshot folders are named.
var commitRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// sha256Re is an LFS blob's ETag: the SHA-256 of its content.
var sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)

// etagRe is what we accept as a blob's file name: the Hub sends a git SHA-1
// or a SHA-256, in hex; anything else from a server could escape blobs/.
var etagRe = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$`)

// namePart is one side of ORG/NAME: huggingface_hub's validate_repo_id
// allows letters, digits, '-', '_' and '.', 1 to 96 characters, not
// starting or ending with '-' or '.'.
var namePart = regexp.MustCompile(`^[0-9A-Za-z_](?:[0-9A-Za-z_.-]{0,94}[0-9A-Za-z_])?$`)

// IsCommit reports whether rev is a full commit id (a pinned revision).
func IsCommit(rev string) bool { return commitRe.MatchString(rev) }

// ParseRepoID checks an ORG/NAME model id with huggingface_hub's rules,
// plus a namespace (islkit tells ids from paths by the one slash): no
// "--" or ".." (they would make the cache folder name ambiguous or climb
// out of it), no ".git" suffix.
func ParseRepoID(id string) (org, name string, err error) {
	org, name, ok := strings.Cut(id, "/")
	switch {
	case !ok || strings.Contains(name, "/"):
		return "", "", fmt.Errorf("model id %q: want ORG/NAME", id)
	case !namePart.MatchString(org) || !namePart.MatchString(name):
		return "", "", fmt.Errorf("model id %q: ORG and NAME are letters, digits, '-', '_' and '.' (at most 96, not starting or ending with '-' or '.')", id)
	case strings.Contains(id, "--") || strings.Contains(id, ".."):
		return "", "", fmt.Errorf("model id %q: cannot contain \"--\" or \"..\"", id)
	case strings.HasSuffix(name, ".git"):
		return "", "", fmt.Errorf("model id %q: cannot end in .git", id)
	}
	return org, name, nil
}

// CheckRevision refuses a revision that could not be a git branch, tag or
// commit, or that would leave refs/ once used as a path there ("refs/pr/1"
// is fine: huggingface_hub writes refs/refs/pr/1).
func CheckRevision(rev string) error {
	if rev == "" || len(rev) > 255 {
		return fmt.Errorf("revision %q: empty or longer than 255 bytes", rev)
	}
	for _, r := range rev {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ' ' || r == '~' || r == '^' || r == ':' || r == '?' || r == '*' || r == '[' || r == '@' {
			return fmt.Errorf("revision %q: %q is not allowed in a git ref", rev, r)
		}
	}
	if err := checkRelPath(rev); err != nil {
		return fmt.Errorf("revision %q: %v", rev, err)
	}
	return nil
}

// checkRelPath accepts a clean relative slash path: no empty, "." or ".."
// segment, not absolute. It guards every name that becomes a path in the
// cache (revisions in refs/, file names in snapshots/).
func checkRelPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, '\\') || strings.ContainsRune(p, 0) {
		return fmt.Errorf("not a relative path")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("path segment %q not allowed", seg)
		}
	}
	return nil
}

// normalizeEtag turns an ETag header into a blob name as huggingface_hub
// does: drop the weak prefix W/ and the quotes. (Python's lstrip("W/")
// strips any run of 'W' and '/'; hex ETags never start with either.)
func normalizeEtag(h string) string {
	h = strings.TrimSpace(h)
	h = strings.TrimPrefix(h, "W/")
	return strings.Trim(h, `"`)
}

// repoFolder is the cache folder of a model: models--ORG--NAME.
func repoFolder(org, name string) string {
	return "models--" + org + "--" + name
}
