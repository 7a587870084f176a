package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestStartAtAndIndexedJobShard: a pod of an Indexed Job (index 1 of 2,
// from $JOB_COMPLETION_INDEX) with --start-at sends only its shard, and
// nothing before the agreed time; its run record names the resolved
// shard, the time as given, its turns, and a start not before it.
func TestStartAtAndIndexedJobShard(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	second := strings.Replace(strings.Replace(convLine, `"id":"trace_a","index":0`, `"id":"trace_b","index":1`, 1),
		`"assistant":"Yo"}]`, `"assistant":"Yo"},{"index":1,"target_isl":50,"text":"And?","bare_tokens":1,"max_tokens":3,"assistant":"So"}]`, 1)
	in := writeInput(t, convLine, second)
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	at := time.Now().Add(300 * time.Millisecond).UTC()
	atArg := at.Format(time.RFC3339Nano)
	code, out, errs := runCLIAll("--url", s.URL(), "--shard", "env/2", "--start-at", atArg, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want the run record and conversation 1's 2 turns:\n%s", len(lines), out)
	}
	testutil.ValidateSchema(t, "run.schema.json", []byte(lines[0]))
	var run struct {
		Shard   string `json:"shard"`
		StartAt string `json:"start_at"`
		Started string `json:"started"`
		Turns   int    `json:"turns"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &run); err != nil {
		t.Fatal(err)
	}
	if run.Shard != "1/2" || run.StartAt != atArg || run.Turns != 2 {
		t.Errorf("run record: %+v; want shard 1/2, start_at %s, turns 2", run, atArg)
	}
	started, err := time.Parse(time.RFC3339Nano, run.Started)
	if err != nil || started.Before(at) {
		t.Errorf("started %q (%v), before --start-at %s", run.Started, err, atArg)
	}
	for _, l := range lines[1:] {
		var r struct {
			Index  int `json:"conversation_index"`
			Result struct {
				StartNs int64 `json:"start_ns"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Index != 1 || r.Result.StartNs < at.UnixNano() {
			t.Errorf("request of conversation %d started at %d, want conversation 1 from %d on", r.Index, r.Result.StartNs, at.UnixNano())
		}
	}
}

// TestStartAtAndShardUsage: a --start-at that is no time, long past or
// far ahead, an env/N shard outside an Indexed Job, and --start-at on a
// dry run are usage errors (exit 2) that name what is wrong.
func TestStartAtAndShardUsage(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", s.URL(), "--start-at", "noon", in}, "want an RFC 3339 time"},
		{[]string{"--url", s.URL(), "--start-at", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), in}, "in the past"},
		{[]string{"--url", s.URL(), "--start-at", time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), in}, "ahead"},
		{[]string{"--url", s.URL(), "--shard", "env/2", in}, "JOB_COMPLETION_INDEX"},
		{[]string{"--dry-run", "--start-at", time.Now().UTC().Format(time.RFC3339), in}, "--start-at"},
	} {
		code, out, errs := runCLIAll(c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 saying %q", c.args, code, out, errs, c.want)
		}
	}
}

// TestSignalWhileWaitingToStart: a signal while send waits for
// --start-at ends it with 130 before it sends or writes anything.
func TestSignalWhileWaitingToStart(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	old := signals
	signals = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(200*time.Millisecond, func() { cancel(&cli.Interrupted{Signal: syscall.SIGINT}) })
		return ctx, func() {}
	}
	t.Cleanup(func() { signals = old })
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	code, out, errs := runBounded(t, strings.NewReader(""), "--url", s.URL(), "--start-at", at, in)
	if code != 130 || out != "" {
		t.Errorf("exit %d, out %q, stderr %q; want 130 and nothing written", code, out, errs)
	}
}

// TestStartAtLate: a --start-at a little past (a pod that came up late)
// starts at once and says so.
func TestStartAtLate(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	at := time.Now().Add(-10 * time.Second).UTC().Format(time.RFC3339)
	code, out, errs := runCLIAll("--url", s.URL(), "--start-at", at, in)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(errs, "--start-at "+at+" passed") {
		t.Errorf("exit %d, stderr %q; want the run done and a warning that its start had passed", code, errs)
	}
}
