// Package outfile writes the report files a tool is asked for (measure's
// --summary-json and --plot, a --report page) without harming what is
// there: a regular file is replaced atomically, so a failed run never
// leaves half a report; anything else that exists (a device, a FIFO,
// /dev/stdout, a process substitution) is written through, never
// replaced; a symlink keeps pointing where it did and its target gets the
// data. Paths are checked when they are added, before any work starts,
// and new files honour the umask.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Set is the outputs of one run; it refuses two flags naming one file.
type Set struct {
	files []*File
}

// File is one output, checked and ready to be written once.
type File struct {
	Flag, Path string
	// target is the path written: Path with its symlinks followed.
	target string
	// through: open target for writing (O_APPEND, so a /dev/stdout that is
	// a regular file keeps what the tool already wrote there) instead of
	// replacing it. create: through a dangling symlink, creating its target.
	through, create bool
	// perm is the mode of the file replaced (replacing says so); a new
	// file gets 0666 less the umask.
	perm      fs.FileMode
	replacing bool
	// id identifies an existing file, to refuse the same one twice.
	id os.FileInfo
}

// maxLinks bounds symlink chains (the kernel's own limit is 40).
const maxLinks = 40

// Add checks flag's path and adds it to the set. An empty path is no
// output: Add returns nil, nil. The error names the flag.
func (s *Set) Add(flag, path string) (*File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := prepare(flag, path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	for _, g := range s.files {
		if g.target == f.target || g.id != nil && f.id != nil && os.SameFile(g.id, f.id) {
			return nil, fmt.Errorf("%s and %s name the same file %s: give each its own", g.Flag, flag, path)
		}
	}
	s.files = append(s.files, f)
	return f, nil
}

func prepare(flag, path string) (*File, error) {
	f := &File{Flag: flag, Path: path}
	p, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// Follow the links one hop at a time: a hop through /proc or /dev/fd
	// (/dev/stdout, >(cat)) names an open file, which is written through
	// even when it is a regular file; renaming over it would cut the link.
	for hops := 0; ; hops++ {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			break
		}
		if isProcLink(p) {
			f.through = true
			break
		}
		if hops == maxLinks {
			return nil, errors.New("too many levels of symbolic links")
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(dest) {
			// Relative to the link's real folder: through a symlinked
			// folder, ".." is where the kernel goes, not where the text
			// of the path points.
			dir := filepath.Dir(p)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			dest = filepath.Join(dir, dest)
		}
		f.create = true // a dangling link is written through, creating its target
		p = filepath.Clean(dest)
	}
	f.target = p
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) && f.through:
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		f.through = f.create // a new file, or a dangling link's target
		if err := checkFolder(filepath.Dir(p)); err != nil {
			return nil, err
		}
		return f, nil
	case err != nil:
		return nil, err
	}
	f.id, f.create = st, false
	switch {
	case st.IsDir():
		return nil, errors.New("is a folder")
	case st.Mode().IsRegular() && !f.through:
		f.perm, f.replacing = st.Mode().Perm(), true
		return f, checkFolder(filepath.Dir(p))
	}
	// Written through: check now that it can be written. A FIFO is opened
	// only when written, as `echo > fifo` would: opening it waits for a
	// reader.
	f.through = true
	if err := writable(p); err != nil {
		return nil, fmt.Errorf("not writable: %w", err)
	}
	return f, nil
}

func isProcLink(p string) bool {
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
}

// checkFolder proves that a file can be created in dir by creating one.
func checkFolder(dir string) error {
	tmp, err := createTemp(dir, "check", 0o600)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// createTemp creates a new hidden file in dir. os.CreateTemp would always
// make it 0600; opening it with perm lets the umask decide, as for any
// file a tool creates.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	for {
		var rnd [6]byte
		rand.Read(rnd[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(rnd[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// Write writes data as the file's whole content: through, or into a
// temporary file renamed over the target, so the target is either the
// old file or the new one, never part of either.
func (f *File) Write(data []byte) error {
	if err := f.write(data); err != nil {
		return fmt.Errorf("%s %s: %w", f.Flag, f.Path, err)
	}
	return nil
}

// WriteWith writes what fn produces; when fn fails nothing is written.
func (f *File) WriteWith(fn func(io.Writer) error) error {
	var b strings.Builder
	if err := fn(&b); err != nil {
		return err
	}
	return f.Write([]byte(b.String()))
}

func (f *File) write(data []byte) error {
	if f.through {
		flags := os.O_WRONLY | os.O_APPEND
		if f.create {
			flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		}
		out, err := os.OpenFile(f.target, flags, 0o666)
		if err != nil {
			return err
		}
		if _, err := out.Write(data); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	tmp, err := createTemp(filepath.Dir(f.target), filepath.Base(f.target), 0o666)
	if err != nil {
		return err
	}
	err = func() error {
		if f.replacing {
			// The file replaced keeps its mode, 000 included.
			if err := tmp.Chmod(f.perm); err != nil {
				return err
			}
		}
		if _, err := tmp.Write(data); err != nil {
			return err
		}
		if err := tmp.Sync(); err != nil {
			return err
		}
		return tmp.Close()
	}()
	if err == nil {
		err = os.Rename(tmp.Name(), f.target)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
	}
	return err
}
