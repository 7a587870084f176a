package main

import (
	"strings"
	"testing"
)

func TestEndpointFlag(t *testing.T) {
	code, out, errs := runCLI("--endpoint", "completions", "--cache-bust", "first_turn_prefix")
	if code != 0 || !strings.Contains(out, `"endpoint":"completions"`) || !strings.Contains(out, `"per_request_fixed":0`) {
		t.Errorf("completions: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", "completions", "--apply-chat-template"}, "never templates a completions prompt"},
		{[]string{"--endpoint", "responses", "--verify-url", "http://127.0.0.1:1"}, "--verify-url sends chat requests"},
		{[]string{"--endpoint", "embeddings"}, "--endpoint: invalid endpoint"},
	} {
		code, out, errs := runCLI(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, out %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
