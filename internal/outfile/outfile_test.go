//go:build unix

package outfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func mustAdd(t *testing.T, s *Set, flag, path string) *File {
	t.Helper()
	f, err := s.Add(flag, path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// entries lists a folder, to show that no temporary file is left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func TestRegularFileReplacedAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte("old content, longer than the new one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	var s Set
	f := mustAdd(t, &s, "--summary-json", path)
	if err := f.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	after, _ := os.Stat(path)
	if string(got) != "new\n" {
		t.Errorf("content %q, want %q", got, "new\n")
	}
	// A new inode (rename over) proves the replacement was atomic: a
	// reader never sees a half-written file.
	if os.SameFile(before, after) {
		t.Error("the file was rewritten in place, not replaced")
	}
	if after.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want the old file's 0644", after.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want only summary.json", names)
	}
	// Mode 000 is a mode too (root may still write there); it is kept.
	locked := filepath.Join(dir, "locked.json")
	os.WriteFile(locked, []byte("old"), 0o644)
	os.Chmod(locked, 0)
	var s2 Set
	if err := mustAdd(t, &s2, "--plot", locked).Write([]byte("new")); err != nil {
		t.Skip("cannot replace a mode-000 file here (not root):", err)
	}
	if st, _ := os.Stat(locked); st.Mode().Perm() != 0 {
		t.Errorf("mode %v after replacing a mode-000 file, want 000", st.Mode().Perm())
	}
}

func TestNewFileHonoursUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "plot.svg")
	var s Set
	if err := mustAdd(t, &s, "--plot", path).Write([]byte("<svg/>")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 { // 0666 &^ 0027
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
}

func TestSymlinkKeptAndTargetWritten(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	var s Set
	if err := mustAdd(t, &s, "--summary-json", link).Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target holds %q, want %q", got, "new")
	}
	// A dangling link is written through too: its target is created.
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("created.json", dangling)
	if err := mustAdd(t, &s, "--plot", dangling).Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "created.json")); string(got) != "x" {
		t.Errorf("dangling link's target holds %q", got)
	}
	// A relative link inside a symlinked folder: ".." is taken from the
	// folder's real place, as the kernel takes it (a reviewer's case).
	os.MkdirAll(filepath.Join(dir, "data", "real"), 0o755)
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.Symlink(filepath.Join(dir, "data", "real"), filepath.Join(dir, "tmp", "symdir"))
	os.Symlink("../x.json", filepath.Join(dir, "data", "real", "out.json"))
	if err := mustAdd(t, &s, "--report", filepath.Join(dir, "tmp", "symdir", "out.json")).Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data", "x.json")); string(got) != "y" {
		t.Errorf("data/x.json holds %q, want the write", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp", "x.json")); err == nil {
		t.Error("tmp/x.json was written: the link was resolved by the path's text")
	}
}

func TestFIFOWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	var s Set
	f := mustAdd(t, &s, "--summary-json", fifo)
	got := make(chan string, 1)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := f.Write([]byte("through")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: mode %v", st.Mode()) // its reader still waits
	}
	if g := <-got; g != "through" {
		t.Errorf("reader got %q", g)
	}
}

// TestProcFdWrittenThrough: /dev/stdout and >(cat) are /proc/self/fd links
// to a pipe; the pipe gets the data.
func TestProcFdWrittenThrough(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skip("no /proc:", err)
	}
	var s Set
	f := mustAdd(t, &s, "--summary-json", path)
	if err := f.Write([]byte("to the pipe")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "to the pipe" {
		t.Errorf("pipe got %q", b)
	}
}

// TestDeviceWrittenThrough uses device nodes made in a temporary folder
// (a null and a full device), never the machine's own /dev.
func TestDeviceWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skip("mknod (needs root):", err)
	}
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Skip("mknod:", err)
	}
	var s Set
	if err := mustAdd(t, &s, "--plot", null).Write([]byte("discarded")); err != nil {
		t.Errorf("null device: %v", err)
	}
	// A full device fails the write, and is still a device afterwards.
	if err := mustAdd(t, &s, "--summary-json", full).Write([]byte("no space")); err == nil {
		t.Error("writing to a full device succeeded")
	}
	for _, p := range []string{null, full} {
		if st, _ := os.Lstat(p); st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("%s was replaced: mode %v", p, st.Mode())
		}
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Errorf("folder holds %q, want the two devices only", names)
	}
}

// TestUnwritableFolderFailsAtAdd: the check comes before any work.
func TestUnwritableFolderFailsAtAdd(t *testing.T) {
	dir := t.TempDir()
	var s Set
	for _, path := range []string{
		filepath.Join(dir, "missing", "summary.json"),
		filepath.Join(dir, "file", "summary.json"), // a parent that is a file
		dir, // a folder
	} {
		os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
		if _, err := s.Add("--summary-json", path); err == nil || !strings.Contains(err.Error(), "--summary-json") {
			t.Errorf("Add(%s): %v, want an error naming the flag", path, err)
		}
	}
	if os.Getuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if _, err := s.Add("--plot", filepath.Join(ro, "p.svg")); err == nil {
			t.Error("Add in a read-only folder succeeded")
		}
	}
}

func TestSamePathRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.html")
	os.WriteFile(filepath.Join(dir, "real.html"), nil, 0o644)
	os.Symlink("real.html", filepath.Join(dir, "link.html"))
	for _, pair := range [][2]string{
		{path, filepath.Join(dir, ".", "out.html")},
		{filepath.Join(dir, "link.html"), filepath.Join(dir, "real.html")},
		{"/dev/stdout", "/dev/stdout"},
	} {
		var s Set
		mustAdd(t, &s, "--summary-json", pair[0])
		_, err := s.Add("--plot", pair[1])
		if err == nil || !strings.Contains(err.Error(), "--plot") || !strings.Contains(err.Error(), "--summary-json") {
			t.Errorf("%q: %v, want a refusal naming both flags", pair, err)
		}
	}
	var s Set
	mustAdd(t, &s, "--summary-json", filepath.Join(dir, "a.json"))
	if _, err := s.Add("--plot", filepath.Join(dir, "a.svg")); err != nil {
		t.Errorf("two different files: %v", err)
	}
	// A flag left empty is no output.
	if f, err := s.Add("--report", ""); f != nil || err != nil {
		t.Errorf("empty path: %v, %v", f, err)
	}
}
