package hub

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// repoCache is one model's folder of the hub cache, laid out as
// huggingface_hub lays it:
//
//	models--ORG--NAME/
//	  blobs/<etag>                         the file contents, by ETag
//	  snapshots/<commit>/<file> -> ../../blobs/<etag>   relative symlinks
//	  refs/<revision>                      the commit a branch or tag was at
//	  .no_exist/<commit>/<file>            empty: the file is not in that commit
//
// Every write is a temporary file renamed into place, so a reader (or a
// second process downloading the same model) never sees half a file.
type repoCache struct{ dir string }

func (r repoCache) snapshotDir(commit string) string {
	return filepath.Join(r.dir, "snapshots", commit)
}

func (r repoCache) pointer(commit, file string) string {
	return filepath.Join(r.snapshotDir(commit), filepath.FromSlash(file))
}

func (r repoCache) blob(etag string) string { return filepath.Join(r.dir, "blobs", etag) }

// hasFile reports whether the snapshot holds file (following its link: a
// link to a deleted blob does not count).
func (r repoCache) hasFile(commit, file string) bool {
	st, err := os.Stat(r.pointer(commit, file))
	return err == nil && st.Mode().IsRegular()
}

func (r repoCache) noExist(commit, file string) bool {
	_, err := os.Stat(filepath.Join(r.dir, ".no_exist", commit, filepath.FromSlash(file)))
	return err == nil
}

// markNoExist records that file is absent from commit, as huggingface_hub
// does after a 404 EntryNotFound, so offline runs know it too.
func (r repoCache) markNoExist(commit, file string) error {
	path := filepath.Join(r.dir, ".no_exist", commit, filepath.FromSlash(file))
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return writeAtomic(path, nil)
}

// ref is the commit refs/<rev> names; a full commit id is its own. A ref
// file that does not hold a commit id is ignored.
func (r repoCache) ref(rev string) (string, bool) {
	if IsCommit(rev) {
		return rev, true
	}
	data, err := readLimited(filepath.Join(r.dir, "refs", filepath.FromSlash(rev)), 256)
	if err != nil {
		return "", false
	}
	c := strings.TrimSpace(string(data))
	return c, IsCommit(c)
}

// writeRef records that rev is at commit. Like huggingface_hub: nothing for
// a commit id, and no write when the ref already says so (the cache may be
// read-only); the file holds the bare commit id, no newline.
func (r repoCache) writeRef(rev, commit string) error {
	if rev == commit {
		return nil
	}
	if c, ok := r.ref(rev); ok && c == commit {
		return nil
	}
	return writeAtomic(filepath.Join(r.dir, "refs", filepath.FromSlash(rev)), []byte(commit))
}

// snapshots lists the cached commits, for messages.
func (r repoCache) snapshots() []string {
	entries, err := os.ReadDir(filepath.Join(r.dir, "snapshots"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if IsCommit(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// link points the snapshot's file at the blob with a relative symlink
// (the cache can move), replacing what was there in one rename. Where
// symlinks are refused (Windows without the privilege) the blob is copied,
// as huggingface_hub does.
func (r repoCache) link(commit, file, etag string) error {
	dst := r.pointer(commit, file)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(dst), r.blob(etag))
	if err != nil {
		return err
	}
	tmp := dst + "." + randomSuffix() + ".tmp"
	if err := os.Symlink(rel, tmp); err != nil {
		src, oerr := os.Open(r.blob(etag))
		if oerr != nil {
			return oerr
		}
		defer src.Close()
		return writeAtomicFrom(dst, src)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// incompleteBlob creates the temporary file a download is written to:
// blobs/<etag>.<random>.incomplete, unique per download so that two
// processes never write into one file.
func (r repoCache) incompleteBlob(etag string) (*os.File, error) {
	dir := filepath.Join(r.dir, "blobs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, etag+".*.incomplete")
}

// installBlob moves a complete download into place. A blob another
// process installed meanwhile has the same content (its name is its
// hash), so the rename may replace it.
func (r repoCache) installBlob(tmp *os.File, etag string) error {
	name := tmp.Name()
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, r.blob(etag)); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeAtomic replaces path with data through a temporary file in the
// same folder.
func writeAtomic(path string, data []byte) error {
	return writeAtomicFrom(path, strings.NewReader(string(data)))
}

func writeAtomicFrom(path string, src io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// blobSize is the size of a cached blob, -1 when there is none.
func (r repoCache) blobSize(etag string) int64 {
	st, err := os.Stat(r.blob(etag))
	if errors.Is(err, fs.ErrNotExist) || err != nil || !st.Mode().IsRegular() {
		return -1
	}
	return st.Size()
}
