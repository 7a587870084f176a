package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
)

// TestCtrlCOnLivePipeline: Ctrl-C on `send | measure` (SIGINT to the
// whole pipeline, as a terminal sends it) lost every record and the
// summary (issue 27, item 6). Now send stops issuing and writes its
// cancelled requests (--grace 0s), measure reads on until send's output
// ends, writes every record send wrote and the summary, and exits 130.
func TestCtrlCOnLivePipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{NoTokenize: true, TTFT: 30 * time.Millisecond, TokensPerSecond: 200})
	dir := t.TempDir()
	convs := filepath.Join(dir, "convs.jsonl")
	prep := exec.Command("bash", "-c", `"$0/probe" --cache-bust none | "$0/compose" --isl 50 --osl 8 --conversations 4 --model m > "$1"`, bin, convs)
	if out, err := prep.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sent, measured, sum := filepath.Join(dir, "sent.jsonl"), filepath.Join(dir, "measured.jsonl"), filepath.Join(dir, "sum.json")
	// tee -i: tee is no part of what is tested and must outlive the Ctrl-C.
	cmd := exec.Command("bash", "-c", `"$0/send" --url "$1" --concurrency 2 --requests 1000 --recycle --grace 0s < "$2" | tee -i "$3" | "$0/measure" --summary-json "$4" > "$5"`,
		bin, srv.URL(), convs, sent, sum, measured)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until measure has written a few records: the live pipeline
	// shows them as they come.
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(measured)
		if strings.Count(string(b), "\n") >= 4 {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("no records measured while the run goes on; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("still running 60 s after Ctrl-C; stderr:\n%s", stderr.String())
	}
	// measure exits 130 when it sees the signal before its input ends
	// (cmd/measure's signal tests hold that with an injected signal). Here
	// the kernel signals every process at once, but on a loaded machine
	// measure's signal goroutine can run only after send has stopped and
	// measure has read and measured its whole input: it then ends as a
	// finished run (0). Either way every record must be measured (below).
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 130) {
		t.Errorf("pipeline: %v, want measure's exit status 130 (or 0 when the signal came after its input ended)\nstderr:\n%s", err, stderr.String())
	}
	sentLines := strings.Split(strings.TrimSuffix(readFile(t, sent), "\n"), "\n")
	measuredLines := strings.Split(strings.TrimSuffix(readFile(t, measured), "\n"), "\n")
	if len(measuredLines) != len(sentLines) {
		t.Errorf("send wrote %d lines, measure %d: every record must be measured", len(sentLines), len(measuredLines))
	}
	var s struct {
		Performance *struct {
			Requests int `json:"requests"`
		} `json:"performance"`
	}
	if err := json.Unmarshal([]byte(readFile(t, sum)), &s); err != nil || s.Performance == nil {
		t.Fatalf("summary: %v %+v", err, s)
	}
	if requests := len(withoutRunRecord(sentLines)); s.Performance.Requests != requests {
		t.Errorf("summary counts %d requests, send recorded %d", s.Performance.Requests, requests)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
