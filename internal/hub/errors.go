package hub

import (
	"fmt"
	"strings"
)

// Kind says what went wrong, for callers and tests.
type Kind int

// The kinds of Error.
const (
	Offline          Kind = iota + 1 // HF_HUB_OFFLINE and not cached
	Unreachable                      // no answer from the Hub and not cached
	RepoNotFound                     // no such repo, or private without a usable token
	Gated                            // gated repo without a token that has access
	BadToken                         // the Hub refused the token itself (401)
	Forbidden                        // 403 without a more precise code
	RevisionNotFound                 // no such branch, tag or commit
	EntryNotFound                    // no such file at that revision
	HTTPStatus                       // any other failed status
	BadResponse                      // an answer that is not the Hub's, or a corrupt download
)

// Error is a failed resolution, with what a user needs to fix it.
type Error struct {
	Kind     Kind
	Repo     string // ORG/NAME
	Revision string
	File     string // the file being resolved, if any
	Endpoint string
	URL      string // the request that failed, if any
	Status   int    // the HTTP status, if any
	// Message is the Hub's X-Error-Message, or the detail of a bad
	// response; Code its X-Error-Code, if any.
	Message   string
	Code      string
	TokenFrom string // where the token sent came from; "" for none
	CacheDir  string // the repo's cache folder, for "not cached" kinds
	Cached    []string
	Err       error // the transport error, for Unreachable
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	var b strings.Builder
	at := e.Repo
	if e.Revision != "" && e.Revision != DefaultRevision {
		at += " (revision " + e.Revision + ")"
	}
	switch e.Kind {
	case Offline:
		fmt.Fprintf(&b, "%s is not in the HuggingFace cache (%s) and HF_HUB_OFFLINE is set: unset it to download from %s", at, e.CacheDir, e.Endpoint)
	case Unreachable:
		fmt.Fprintf(&b, "cannot reach %s (%v), and %s is not in the HuggingFace cache (%s)", e.Endpoint, e.Err, at, e.CacheDir)
	case RepoNotFound:
		fmt.Fprintf(&b, "%s: no such model on %s, or it is private or gated: ", e.Repo, e.Endpoint)
		if e.TokenFrom == "" {
			b.WriteString("set HF_TOKEN to a token with read access to it")
		} else {
			fmt.Fprintf(&b, "the token from %s has no access to it (set HF_TOKEN to one that has)", e.TokenFrom)
		}
	case Gated:
		fmt.Fprintf(&b, "%s is a gated model: request access on %s/%s, then ", e.Repo, e.Endpoint, e.Repo)
		if e.TokenFrom == "" {
			b.WriteString("set HF_TOKEN to a token of the account that was granted access")
		} else {
			fmt.Fprintf(&b, "set HF_TOKEN to a token of an account that was granted access (the token from %s was not)", e.TokenFrom)
		}
	case BadToken:
		fmt.Fprintf(&b, "%s refused the token from %s as invalid: set HF_TOKEN to a valid token, or remove it for public models", e.Endpoint, e.TokenFrom)
	case Forbidden:
		fmt.Fprintf(&b, "%s: access forbidden: set HF_TOKEN to a token with read access to it", e.Repo)
	case RevisionNotFound:
		fmt.Fprintf(&b, "%s has no revision %q (no such branch, tag or commit)", e.Repo, e.Revision)
	case EntryNotFound:
		fmt.Fprintf(&b, "%s has no file %s", at, e.File)
	case HTTPStatus:
		fmt.Fprintf(&b, "%s: %s: HTTP %d", e.Repo, e.URL, e.Status)
		switch {
		case e.Code != "":
			fmt.Fprintf(&b, " %s", e.Code)
		case e.Status == 404:
			// No code to say which: the repo, the revision or the file.
			fmt.Fprintf(&b, " (not found: no model %s on %s, no revision %q of it, or no file %s there)", e.Repo, e.Endpoint, e.revision(), e.File)
		}
	case BadResponse:
		fmt.Fprintf(&b, "%s: %s", e.URL, e.Message)
		return b.String()
	}
	if e.Message != "" && e.Kind != Offline && e.Kind != Unreachable {
		fmt.Fprintf(&b, " (Hub: %s)", e.Message)
	}
	if len(e.Cached) > 0 && (e.Kind == Offline || e.Kind == Unreachable) {
		fmt.Fprintf(&b, "; cached commits: %s (pass one as --revision)", strings.Join(e.Cached, ", "))
	}
	return b.String()
}

func (e *Error) revision() string {
	if e.Revision == "" {
		return DefaultRevision
	}
	return e.Revision
}

// reason is the failure alone, for a warning when the cache serves
// instead.
func (e *Error) reason() string {
	if e.Kind == Unreachable {
		return fmt.Sprintf("cannot reach %s (%v)", e.Endpoint, e.Err)
	}
	return e.Error()
}

// fallsBack says whether huggingface_hub would try the cache after this
// failed HEAD: any failure except a missing revision or file, which the
// Hub has just said for certain.
func fallsBack(err error) bool {
	e, ok := err.(*Error)
	if !ok {
		return false
	}
	return e.Kind != RevisionNotFound && e.Kind != EntryNotFound
}
