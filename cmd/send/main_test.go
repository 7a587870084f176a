package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
)

const convLine = `{"kind":"islkit.conversation","schema_version":1,"id":"trace_a","index":0,"benchmark_id":"bench","cache_bust":"first_turn_suffix","marker_landing":"first_user_turn/suffix","turns":[{"index":0,"target_isl":40,"text":"Hi","bare_tokens":1,"max_tokens":3,"assistant":"Yo"}],"exact":false,"model":"m"}`

func writeInput(t *testing.T, lines ...string) string {
	p := filepath.Join(t.TempDir(), "convs.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCLI runs send and returns its exit code, its records and stderr. A
// live run's first line, its configuration (islkit.run), is left out:
// TestRunRecord reads it.
func runCLI(args ...string) (int, string, string) {
	code, out, errs := runCLIAll(args...)
	if strings.HasPrefix(out, `{"kind":"islkit.run",`) {
		_, out, _ = strings.Cut(out, "\n")
	}
	return code, out, errs
}

// runCLIAll runs send and returns its whole output.
func runCLIAll(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	bad := writeInput(t, convLine, strings.Replace(convLine, `"schema_version":1`, `"schema_version":9`, 1))

	code, out, _ := runCLI("--dry-run", in)
	if code != 0 || !strings.Contains(out, `"marker":"\n\n[rid:eb232ceb3496]"`) {
		t.Errorf("dry run: %d %s", code, out)
	}
	for _, args := range [][]string{
		{in}, // neither --url nor --dry-run
		{"--url", s.URL(), "--rate", "-3", in},
		{"--url", s.URL(), "--concurrency", "-1", in},
		{"--url", s.URL(), "--recycle", in},
		{"--url", "ftp://x", in},
		{"--dry-run", "--extra-body", "[1]", in},
		{"--dry-run", "--shard", "2/2", in},
		{"--bogus-flag", in},
	} {
		if code, _, errs := runCLI(args...); code != 2 || !strings.HasPrefix(errs, "send: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	code, out, errs := runCLI("--url", s.URL(), bad)
	if code != 1 || out != "" || !strings.Contains(errs, `convs.jsonl:2: field "schema_version"`) || s.Requests() != 0 {
		t.Errorf("bad input: exit %d, out %q, err %q, server saw %d", code, out, errs, s.Requests())
	}
	if code, out, _ := runCLI("--url", s.URL(), in); code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"ok":true`) {
		t.Errorf("live: %d %s", code, out)
	}
	if code, out, errs := runCLI("--url", s.URL(), "-H", testserver.FaultHeader+"=500", "--requests", "5", "--recycle", in); code != 1 ||
		strings.Count(out, "\n") != 5 || !strings.Contains(errs, "5 of 5 requests failed") {
		t.Errorf("failures: %d %q %s", code, errs, out)
	}
	if code, _, errs := runCLI("--url", "http://127.0.0.1:1", in); code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cannot reach") {
		t.Errorf("unreachable: %d %q", code, errs)
	}
}

// closedOut is a stdout whose reader went away (`send | head -1`).
type closedOut struct{}

func (closedOut) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestClosedStdoutExitsZero: a live run whose output is closed stops and
// exits 0, as the dry run does (issue 11 item 5).
func TestClosedStdoutExitsZero(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	for _, args := range [][]string{
		{"--dry-run", in},
		{"--url", s.URL(), in},
		{"--url", s.URL(), "--requests", "50", "--recycle", "--concurrency", "4", in},
	} {
		var errb bytes.Buffer
		if code := run(args, strings.NewReader(""), closedOut{}, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, errb.String())
		}
	}
}

// TestSignalExitCodes: SIGINT or SIGTERM with requests in flight exits
// 130 or 143; the requests cut off are recorded as cancelled and reported
// by name, not as failures (issue 11 item 6).
func TestSignalExitCodes(t *testing.T) {
	in := writeInput(t, convLine)
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		var once sync.Once
		s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
		// The signal goes out once a request is at the server, so send's
		// handler is surely installed (else the test binary would die).
		s.Observe = func([]byte, int) { once.Do(func() { syscall.Kill(os.Getpid(), sig) }) }
		code, out, errs := runCLI("--url", s.URL(), "-H", testserver.FaultHeader+"=stall", "--concurrency", "4",
			"--requests", "8", "--recycle", "--grace", "0s", in)
		if code != want {
			t.Errorf("%v: exit %d, want %d; stderr %q", sig, code, want, errs)
		}
		if strings.Contains(errs, "map[") || strings.Contains(errs, "failed") || !strings.Contains(errs, "cancelled") {
			t.Errorf("%v: stderr %q: want the cancelled requests by name, no failure", sig, errs)
		}
		if n := strings.Count(out, `"kind":"cancelled"`); n == 0 || n != strings.Count(out, "\n") {
			t.Errorf("%v: %d cancelled records in %q", sig, n, out)
		}
	}
}

// TestDurationCutIsNotFailure: requests still running when --duration and
// its grace period are over are cancelled, and the run exits 0.
func TestDurationCutIsNotFailure(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	code, out, errs := runCLI("--url", s.URL(), "-H", testserver.FaultHeader+"=stall", "--concurrency", "2",
		"--duration", "500ms", "--grace", "0s", "--recycle", in)
	if code != 0 || strings.Contains(errs, "failed") || !strings.Contains(errs, "2 requests cancelled") {
		t.Errorf("exit %d, stderr %q; want 0 and a note on the 2 cancelled requests", code, errs)
	}
	if n := strings.Count(out, `"kind":"cancelled"`); n != 2 {
		t.Errorf("%d cancelled records, want 2: %s", n, out)
	}
}

// TestEmptyInput: no conversations is an error, live or dry: exit 1 with
// a message that says what to look at, nothing sent (issue 27 item 10: a
// failed probe or compose ended the pipeline in exit 0). With
// --allow-empty it is nothing to do: exit 0 with a note (issue 11 item
// 13).
func TestEmptyInput(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	empty := writeInput(t)
	for _, args := range [][]string{{"--url", s.URL()}, {"--url", s.URL(), empty}, {"--dry-run"}} {
		code, out, errs := runCLI(args...)
		if code != 1 || out != "" || !strings.Contains(errs, "no conversations") || !strings.Contains(errs, "--allow-empty") {
			t.Errorf("%v: exit %d, out %q, stderr %q; want 1 and a message naming --allow-empty", args, code, out, errs)
		}
		code, out, errs = runCLI(append(args, "--allow-empty")...)
		if code != 0 || out != "" || !strings.Contains(errs, "no conversations") || strings.Contains(errs, "shard") {
			t.Errorf("%v --allow-empty: exit %d, out %q, stderr %q; want 0 and a note", args, code, out, errs)
		}
	}
	if s.Requests() != 0 {
		t.Errorf("server saw %d requests", s.Requests())
	}
}

// TestDryRunRefusesLiveFlags: a flag a dry run would ignore is refused
// with a usage error naming it (issue 11 item 16).
func TestDryRunRefusesLiveFlags(t *testing.T) {
	in := writeInput(t, convLine)
	for _, flag := range [][]string{
		{"--requests", "5"}, {"--recycle"}, {"--duration", "1s"}, {"--rate", "3"}, {"--concurrency", "2"},
		{"--timeout", "1s"}, {"--grace", "1s"}, {"--rate-distribution", "poisson"}, {"--no-payload"},
	} {
		code, out, errs := runCLI(append([]string{"--dry-run", in}, flag...)...)
		if code != 2 || out != "" || !strings.Contains(errs, flag[0]) {
			t.Errorf("--dry-run %v: exit %d, out %q, stderr %q; want 2 naming %s", flag, code, out, errs, flag[0])
		}
	}
}

// TestRequestsBeyondOnePass: --requests above one pass over the dataset
// without --recycle is refused rather than silently cut (issue 11 item 16).
func TestRequestsBeyondOnePass(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	code, out, errs := runCLI("--url", s.URL(), "--requests", "17", in)
	if code != 2 || out != "" || !strings.Contains(errs, "--recycle") || s.Requests() != 0 {
		t.Errorf("exit %d, out %q, stderr %q, server saw %d; want 2 and a hint at --recycle", code, out, errs, s.Requests())
	}
	if code, out, errs := runCLI("--url", s.URL(), "--requests", "1", in); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("--requests 1 of 1: exit %d, stderr %q", code, errs)
	}
}

// TestFlagAndURLMessages: 0 for --concurrency or --speedup is refused as
// negatives are (it silently meant the default), header errors are usage
// errors (exit 2, not 1), a --url without a scheme says to add http://,
// and no message repeats the password of a --url (issue 27 item 18).
func TestFlagAndURLMessages(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", s.URL(), "--concurrency", "0", in}, "--concurrency 0: want 1 to 100000"},
		{[]string{"--url", s.URL(), "--schedule", "timestamps", "--speedup", "0", in}, "--speedup 0: want a positive factor"},
		{[]string{"--url", s.URL(), "-H", "Host=example.test", in}, "-H: header Host: set by the client itself"},
		{[]string{"--url", s.URL(), "-H", "Bad Name=x", in}, `-H: header name "Bad Name": not a valid HTTP field name`},
		{[]string{"--url", "127.0.0.1:8000", in}, `"127.0.0.1:8000" has no scheme: add http:// (http://127.0.0.1:8000)`},
		{[]string{"--url", s.URL(), "--api-key", "hunter2\n", in}, "--api-key holds a control character"},
		{[]string{"--url", "http://u:hunter2@127.0.0.1:port", in}, `"http://u:xxxxx@127.0.0.1:port"`},
	} {
		code, out, errs := runCLI(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Contains(errs, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	// A password in a --url that cannot be reached: a failure, not a
	// usage error, and redacted.
	code, _, errs := runCLI("--url", "http://u:hunter2@127.0.0.1:1", in)
	if code != 1 || !strings.Contains(errs, "cannot reach http://u:xxxxx@127.0.0.1:1/") || strings.Contains(errs, "hunter2") {
		t.Errorf("unreachable: exit %d, stderr %q; want 1, the URL redacted", code, errs)
	}
	if s.Requests() != 0 {
		t.Errorf("server saw %d requests", s.Requests())
	}
}
