package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// failingReader fails the test if the input is read: a refused command
// line must be refused before any work.
type failingReader struct{ t *testing.T }

func (r failingReader) Read([]byte) (int, error) {
	r.t.Error("the input was read")
	return 0, os.ErrClosed
}

// TestOutputPathsCheckedBeforeWork: an unusable --summary-json/--plot path,
// or both naming one file, is refused before the input is read (issue 11,
// item 1).
func TestOutputPathsCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--summary-json", filepath.Join(dir, "missing", "s.json")},
		{"--plot", filepath.Join(dir, "missing", "p.svg")},
		{"--summary-json", filepath.Join(dir, "same.html"), "--plot", filepath.Join(dir, "same.html")},
		{"--summary-json", dir}, // a folder
		{"--report", filepath.Join(dir, "missing", "r.html")},
		{"--report", filepath.Join(dir, "r.html"), "--plot", filepath.Join(dir, "r.html")},
	} {
		var out, errb strings.Builder
		code := run(args, failingReader{t}, &out, &errb)
		if code == 0 || out.Len() != 0 || !strings.HasPrefix(errb.String(), "measure: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a refusal", args, code, out.String(), errb.String())
		}
	}
	// A symlinked summary keeps its link; the target gets the summary.
	os.WriteFile(filepath.Join(dir, "real.json"), nil, 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink("real.json", link)
	if code, _, errs := runCLI(`{"text":"a"}`+"\n", "--summary-json", link); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.json")); !strings.Contains(string(b), `"kind"`) {
		t.Errorf("target holds %q, want the summary", b)
	}
}

// TestTemplateWarningOncePerRun: records counted bare because the model has
// no template give one warning with their count (issue 11, item 12).
func TestTemplateWarningOncePerRun(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "raise.jinja")
	os.WriteFile(tmpl, []byte(`{{ raise_exception("no system messages") }}`), 0o644)
	in := strings.Repeat(`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`+"\n", 5)
	code, out, errs := runCLI(in, "--apply-chat-template", "--chat-template", tmpl)
	if code != 0 || strings.Count(out, "\n") != 5 {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if strings.Count(errs, "warning") != 1 || !strings.Contains(errs, "5 request(s)") || !strings.Contains(errs, "no system messages") {
		t.Errorf("stderr %q, want one warning naming 5 requests and the cause", errs)
	}
}

// TestRepeatedLineErrorsCapped: 30 bad lines print 20 errors and a count
// (issue 11, item 13).
func TestRepeatedLineErrorsCapped(t *testing.T) {
	code, _, errs := runCLI(strings.Repeat("[1]\n", 30), "--workers", "1")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || len(lines) != 22 || !strings.Contains(lines[20], "10 more") || !strings.Contains(lines[21], "30 line(s) failed") {
		t.Errorf("exit %d, %d stderr lines: %q", code, len(lines), errs)
	}
}

// TestIgnoredFlagsRefused: flags that only act with --apply-chat-template,
// and a --now that would silently read the clock, are usage errors
// (issue 11, item 16).
func TestIgnoredFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--bare"}, {"--rendered"}, {"--no-tools"},
		{"--now", "0001-01-01T00:00:00"},
	} {
		code, out, errs := runCLI(`{"text":"a"}`+"\n", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "measure: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(`{"text":"a"}`+"\n", "--apply-chat-template", "--bare", "--rendered", "--no-tools"); code != 0 {
		t.Errorf("with --apply-chat-template: exit %d, %s", code, errs)
	}
}

// TestMaxLineBytesDefaultStated: the default line limit is what bounded
// tokenization allows (64 MiB, about 8 times that per worker), and --help
// says it (issue 11, item 17).
func TestMaxLineBytesDefaultStated(t *testing.T) {
	code, out, _ := runCLI("", "--help")
	if out = strings.Join(strings.Fields(out), " "); code != 0 || !strings.Contains(out, "(64 MiB)") || !strings.Contains(out, "(default: 67108864)") {
		t.Errorf("--help does not state the 64 MiB default: %s", out)
	}
	long := `{"text":"` + strings.Repeat("a", 64<<20) + `"}` + "\n"
	if code, out, errs := runCLI(long+`{"text":"b"}`+"\n", "--workers", "1"); code != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "line too long") {
		t.Errorf("a 64 MiB line: exit %d, %d lines out, stderr %q", code, strings.Count(out, "\n"), errs)
	}
}

// closingWriter takes one write, then answers EPIPE as a pipe whose reader
// went away (`| head -1`) does.
type closingWriter struct {
	strings.Builder
	writes int
}

func (w *closingWriter) Write(p []byte) (int, error) {
	if w.writes++; w.writes > 1 {
		return 0, syscall.EPIPE
	}
	return w.Builder.Write(p)
}

// TestClosedStdoutStillWritesSummaries: `measure --summary --summary-json
// s.json | head -1` must still write both summaries, counting every
// record, and exit 0 (issue 27, item 9: it wrote neither).
func TestClosedStdoutStillWritesSummaries(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "s.json")
	// Lines of 100 KiB, so each one is a write of its own.
	line := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a ", 50<<10) + `"}]}` + "\n"
	var out closingWriter
	var errb strings.Builder
	code := run([]string{"--summary", "--summary-json", sum, "--workers", "1"}, strings.NewReader(strings.Repeat(line, 4)), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if out.writes < 2 {
		t.Fatalf("%d writes: the test needs the output to close before the end", out.writes)
	}
	if !strings.Contains(errb.String(), "requests 4 ") {
		t.Errorf("stderr summary missing or incomplete: %q", errb.String())
	}
	b, err := os.ReadFile(sum)
	if err != nil || !strings.Contains(string(b), `"requests": 4,`) {
		t.Errorf("summary file: %v %q", err, b)
	}
}

// TestEmptyInputFails: no records at all (the stage before failed) is an
// error, exit 1, unless --allow-empty (issue 27, item 10).
func TestEmptyInputFails(t *testing.T) {
	for _, in := range []string{"", "\n\n"} {
		code, out, errs := runCLI(in, "--summary")
		if code != 1 || out != "" || !strings.Contains(errs, "measure: <stdin>: no records") || !strings.Contains(errs, "--allow-empty") {
			t.Errorf("input %q: exit %d, stdout %q, stderr %q; want exit 1 naming the input and --allow-empty", in, code, out, errs)
		}
	}
	if code, _, errs := runCLI("", "--allow-empty", "--summary"); code != 0 || !strings.Contains(errs, "requests 0") {
		t.Errorf("--allow-empty: exit %d, stderr %q; want 0 and the summary", code, errs)
	}
}
