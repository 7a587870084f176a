package main

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	code, out, errs := runCLI("--cache-bust", "first_turn_prefix")
	var rec records.Probe
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Kind != records.KindProbe || rec.MarkerTokens == 0 {
		t.Errorf("probe: exit %d, out %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{
		{"--cache-bust", "sideways"},
		{"--now", "yesterday"},
		{"--bogus"},
	} {
		if code, out, errs := runCLI(args...); code != 2 || out != "" || !strings.HasPrefix(errs, "probe: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "Usage: probe") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	// A server of the same model agrees; the record carries its counts.
	s := testserver.StartTest(t, testserver.Config{})
	code, out, errs = runCLI("--apply-chat-template", "--verify-url", s.URL(), "--model", "qwen3")
	if code != 0 || !strings.Contains(out, `"agree":true`) {
		t.Errorf("--verify-url: exit %d, out %q, stderr %q", code, out, errs)
	}
}
