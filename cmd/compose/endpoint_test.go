package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/probe"
)

// compose takes the probe's endpoint, refuses another, and refuses
// multi-turn flags for completions with what to use instead.
func TestEndpointFlag(t *testing.T) {
	rec, err := probe.Run(probe.Options{CacheBust: cachebust.SystemPrefix, Endpoint: endpoint.Completions})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(rec)
	p := string(line) + "\n"
	code, out, errs := runCLI(p, "--isl", "30", "--conversations", "2")
	if code != 0 || strings.Count(out, `"endpoint":"completions"`) != 2 || !strings.Contains(out, `"marker_landing":"first_user_turn/prefix"`) {
		t.Errorf("completions: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--isl", "30", "--turns", "2"}, "--turns must be 1 (got 2)"},
		{[]string{"--isl", "30", "--shared-system-prompt-length", "10"}, "no system message"},
		{[]string{"--isl", "30", "--endpoint", "chat"}, "--endpoint chat disagrees with the probe record (completions)"},
		{[]string{"--isl", "30", "--endpoint", "nope"}, "--endpoint: invalid endpoint"},
	} {
		code, out, errs := runCLI(p, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, out %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
