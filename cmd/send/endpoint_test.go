package main

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
)

// send posts to the conversations' endpoint (a bare --url gets its path)
// and refuses an --endpoint that is not theirs, before any request.
func TestEndpointFlag(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	resp := writeInput(t, strings.Replace(convLine, `"benchmark_id":"bench",`, `"benchmark_id":"bench","endpoint":"responses",`, 1))
	code, out, _ := runCLI("--url", s.URL(), resp)
	if code != 0 || !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"endpoint":"responses"`) || !strings.Contains(out, `"input":[`) {
		t.Errorf("responses live: %d %s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "--endpoint", "chat", resp}, "composed for --endpoint responses, not chat"},
		{[]string{"--dry-run", "--endpoint", "embeddings", resp}, "--endpoint: invalid endpoint"},
		{[]string{"--dry-run", "--max-tokens-field", "max_completion_tokens", resp}, "--max-tokens-field is for chat requests"},
		{[]string{"--url", s.URL(), "--endpoint", "completions", resp}, "not completions"},
	} {
		before := s.Requests()
		code, out, errs := runCLI(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || s.Requests() != before {
			t.Errorf("%v: exit %d, out %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
