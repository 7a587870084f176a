package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/send"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestRunRecord: a live run writes its configuration once, as its first
// line (islkit.run), so measure can put it in the summary and --compare
// can say what differed (issue 27, item 14); the API key, header values
// and the URL's password are not in it.
func TestRunRecord(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	url := strings.Replace(s.URL(), "http://", "http://user:hunter2@", 1)
	code, out, errs := runCLIAll("--url", url, "--api-key", "sk-secret1", "-H", "X-Token=secret2",
		"--concurrency", "2", "--requests", "3", "--recycle", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want the run record and 3 requests:\n%s", len(lines), out)
	}
	testutil.ValidateSchema(t, "run.schema.json", []byte(lines[0]))
	for _, secret := range []string{"hunter2", "sk-secret1", "secret2"} {
		if strings.Contains(lines[0], secret) {
			t.Errorf("the run record holds the secret %q: %s", secret, lines[0])
		}
	}
	var run struct {
		Kind        string   `json:"kind"`
		URL         string   `json:"url"`
		Endpoint    string   `json:"endpoint"`
		Model       string   `json:"model"`
		Concurrency int      `json:"concurrency"`
		Requests    int      `json:"requests"`
		Headers     []string `json:"headers"`
		CommandLine []string `json:"command_line"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &run); err != nil {
		t.Fatal(err)
	}
	wantURL := strings.Replace(s.URL(), "http://", "http://user:xxxxx@", 1)
	if run.Kind != "islkit.run" || run.URL != wantURL || run.Endpoint != "chat" || run.Model != "m" ||
		run.Concurrency != 2 || run.Requests != 3 || strings.Join(run.Headers, ",") != "X-Token" {
		t.Errorf("run record %+v", run)
	}
	if got := strings.Join(run.CommandLine, " "); got != "--url "+wantURL+" --api-key REDACTED -H X-Token=REDACTED --concurrency 2 --requests 3 --recycle "+in {
		t.Errorf("command line %q", got)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, `{"kind":"islkit.request"`) {
			t.Errorf("line after the run record: %s", l)
		}
	}
}

// TestRedactArgs: every way of giving a secret on send's command line is
// redacted in the run record; other arguments are kept as given.
func TestRedactArgs(t *testing.T) {
	got := send.RedactArgs([]string{"--api-key=sk-1", "-HAuthorization=Bearer tok", "--header=X-Key=k2", "--header", "Cookie=c3",
		"--url=https://me:pw4@h/v1", "--concurrency", "4", "http://plain/x"})
	want := []string{"--api-key=REDACTED", "-HAuthorization=REDACTED", "--header=X-Key=REDACTED", "--header", "Cookie=REDACTED",
		"--url=https://me:xxxxx@h/v1", "--concurrency", "4", "http://plain/x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("RedactArgs:\n got %q\nwant %q", got, want)
	}
}
