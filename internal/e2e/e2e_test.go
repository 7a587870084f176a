// Package e2e runs the four tools as a user does, from built binaries.
package e2e

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// TestMain removes the binaries the tests built. The binaries they run
// keep their tokenizer cache in a temporary folder, never the user's.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "islkit-e2e-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("ISLKIT_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildTools compiles the commands once into a temporary folder.
func buildTools(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "islkit-e2e-"); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "./cmd/probe", "./cmd/compose", "./cmd/send", "./cmd/measure")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// TestDemo runs scripts/demo.sh (what `make demo` and the README run) and
// checks what it promises: every first turn's wire ISL is exactly --isl,
// counted under measure's default vllm profile and under transformers
// (compose's requests have string contents only, where the two agree).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	for _, server := range []string{"vllm", "transformers"} {
		t.Run(server, func(t *testing.T) { testDemo(t, server) })
	}
}

func testDemo(t *testing.T, server string) {
	root := testutil.RepoRoot(t)
	bin := buildTools(t)
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Env = append(os.Environ(), "BIN="+bin, "OUT="+filepath.Join(dir, "requests.jsonl"), "SUMMARY_JSON="+summaryPath, "SERVER="+server)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var s struct {
		Requests   int            `json:"requests"`
		Profiles   map[string]int `json:"profiles"`
		Unreadable struct {
			Total int `json:"total"`
		} `json:"unreadable_lines"`
		VsTarget struct {
			N        int      `json:"n"`
			ExactPct *float64 `json:"exact_pct"`
		} `json:"vs_target"`
		ByTurn []struct {
			Turn     int `json:"turn"`
			Requests int `json:"requests"`
			VsTarget struct {
				N        int      `json:"n"`
				Exact    int      `json:"exact"`
				ExactPct *float64 `json:"exact_pct"`
			} `json:"vs_target"`
		} `json:"by_turn"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Requests == 0 || s.Unreadable.Total != 0 || s.Profiles[server] != s.Requests {
		t.Fatalf("summary: %d requests, %d unreadable lines, profiles %v", s.Requests, s.Unreadable.Total, s.Profiles)
	}
	if len(s.ByTurn) == 0 || s.ByTurn[0].Turn != 0 {
		t.Fatalf("summary has no turn 0: %s", data)
	}
	first := s.ByTurn[0].VsTarget
	if first.N != 50 || first.Exact != 50 || first.ExactPct == nil || *first.ExactPct != 100 {
		t.Errorf("first turns: %d/%d exact (%v%%), want 50/50 = 100%%", first.Exact, first.N, first.ExactPct)
	}
	// Exact mode makes later turns exact too.
	if s.VsTarget.ExactPct == nil || *s.VsTarget.ExactPct != 100 {
		t.Errorf("all turns: %v%% exact, want 100%%", s.VsTarget.ExactPct)
	}
}

// TestMeasureBadInput: each bad line is reported with its line number and
// counted in the summary, the run goes on, good lines are written whole,
// and the exit status says that some failed.
func TestMeasureBadInput(t *testing.T) {
	bin := buildTools(t)
	long := strings.Repeat("a", 3000)
	input := strings.Join([]string{
		`{"text": "trunc`, // a broken first line does not hide the others
		`{"text":"ok one"}`,
		"{\"text\":\"bad \xff utf8\"}",
		`{"model":"m","messages":[{"role":"user","content":"` + long + `"}]}`,
		`{"model":"m"}`,
		`{"model":"m","messages":[{"role":"user","content":{"odd":1}}]}`,
		`{"data":[1,2]}`,
		`[1]`,
		`{"text":"ok two"}`,
	}, "\n") + "\n"
	summaryPath := filepath.Join(t.TempDir(), "summary.json")
	cmd := exec.Command(filepath.Join(bin, "measure"), "--apply-chat-template", "--max-line-bytes", "1000", "--summary-json", summaryPath)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\nstderr: %s", err, stderr.String())
	}
	// The chat body measure cannot count keeps its place, with the reason
	// (issue 27, item 7); lines of no known shape are left out.
	want := `{"text":"ok one","tokens":2}` + "\n" +
		`{"model":"m","messages":[{"role":"user","content":{"odd":1}}],"isl":{"error":"payload: messages[0].content is neither a string nor a list of parts"}}` + "\n" +
		`{"text":"ok two","tokens":2}` + "\n"
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}
	for _, n := range []int{1, 3, 4, 5, 6, 7, 8} {
		if !strings.Contains(stderr.String(), fmt.Sprintf("<stdin>:%d: ", n)) {
			t.Errorf("stderr does not report line %d:\n%s", n, stderr.String())
		}
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Unreadable struct {
			Total  int            `json:"total"`
			ByKind map[string]int `json:"by_kind"`
		} `json:"unreadable_lines"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	wantKinds := map[string]int{"bad_json": 2, "bad_utf8": 1, "line_too_long": 1, "no_messages": 1, "bad_record": 2}
	if s.Unreadable.Total != 7 || !maps.Equal(s.Unreadable.ByKind, wantKinds) {
		t.Errorf("unreadable lines %+v, want 7: %v", s.Unreadable, wantKinds)
	}
}

// TestMeasureClosedStdout: `measure | head -1` ends quietly with status 0.
func TestMeasureClosedStdout(t *testing.T) {
	bin := buildTools(t)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Repeat(`{"text":"Hello world"}`+"\n", 50000)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `set -o pipefail; "$0" "$1" | head -n 1`, filepath.Join(bin, "measure"), in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pipeline failed: %v\n%s", err, out)
	}
	if string(out) != `{"text":"Hello world","tokens":2}`+"\n" {
		t.Errorf("output %q", out)
	}
}

// TestProbeVerifyURL: probe --verify-url against the test server running
// the same model agrees (exit 0), and against another model says so (exit 1).
func TestProbeVerifyURL(t *testing.T) {
	bin := buildTools(t)
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.StartTest(t, testserver.Config{Model: src})
	out, err := exec.Command(filepath.Join(bin, "probe"), "--apply-chat-template", "--verify-url", srv.URL()).Output()
	if err != nil {
		t.Fatalf("probe --verify-url: %v", err)
	}
	testutil.ValidateSchema(t, "probe.schema.json", out)
	var rec struct {
		Verify struct {
			Agree    bool `json:"agree"`
			Requests []struct {
				Ours, Server int
			} `json:"requests"`
		} `json:"verify"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Verify.Agree || len(rec.Verify.Requests) != 6 || rec.Verify.Requests[0].Server != 15 {
		t.Errorf("verify %+v, want 6 agreeing requests, the first 15 tokens", rec.Verify)
	}
	llama := filepath.Join(testutil.RefDir(t), "models", "llama3")
	cmd := exec.Command(filepath.Join(bin, "probe"), "--tokenizer", llama, "--apply-chat-template", "--verify-url", srv.URL())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "wire ISL will not be exact") {
		t.Errorf("llama3 probe against a Qwen3 server: %v\n%s", err, stderr.String())
	}
}

// TestToolsLinkNoTestPackages: test helpers (testing, testing/fstest, ...)
// stay out of the shipped binaries.
func TestToolsLinkNoTestPackages(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/probe", "./cmd/compose", "./cmd/send", "./cmd/measure")
	cmd.Dir = testutil.RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || strings.HasPrefix(pkg, "testing/") || strings.HasSuffix(pkg, "/internal/testutil") || strings.HasSuffix(pkg, "/internal/testserver") {
			t.Errorf("a tool links %s", pkg)
		}
	}
}

// TestShardsMergeWithoutDuplicates: the records of one run's shards (send
// --shard I/N, one sender each) merge with cat into the run's records:
// measure finds neither duplicates nor conflicts, and counts every request
// once (issue 27, item 3); the same shard twice is dropped as duplicates.
func TestShardsMergeWithoutDuplicates(t *testing.T) {
	bin := buildTools(t)
	dir := t.TempDir()
	script := `set -euo pipefail
"$0/probe" --apply-chat-template --now 2025-07-10T12:00:00 | "$0/compose" --isl 200 --osl 10 --conversations 5 --turns 2 --seed 1 --model Qwen/Qwen3-8B > "$1/convs.jsonl"
for i in 0 1 2; do "$0/send" --dry-run --shard $i/3 < "$1/convs.jsonl" > "$1/shard$i.jsonl"; done
cat "$1"/shard*.jsonl | "$0/measure" --summary-json "$1/merged.json" > /dev/null
cat "$1"/shard*.jsonl "$1/shard0.jsonl" | "$0/measure" --summary-json "$1/again.json" > /dev/null`
	if out, err := exec.Command("bash", "-c", script, bin, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range []struct {
		file       string
		duplicates int
	}{{"merged.json", 0}, {"again.json", 4}} { // shard 0: conversations 0 and 3, 2 turns each
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Requests   int `json:"requests"`
			Duplicates int `json:"duplicates_dropped"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Requests != 10 || s.Duplicates != c.duplicates {
			t.Errorf("%s: requests %d, duplicates %d; want 10 (5 conversations × 2 turns), %d", c.file, s.Requests, s.Duplicates, c.duplicates)
		}
	}
}

// withoutRunRecord drops the islkit.run line, a live send's first (measure
// passes it through), from lines: the tests read the request records.
func withoutRunRecord[T ~string | ~[]byte](lines []T) []T {
	var out []T
	for _, l := range lines {
		if !strings.HasPrefix(string(l), `{"kind":"islkit.run",`) {
			out = append(out, l)
		}
	}
	return out
}
