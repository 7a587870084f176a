package main

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
)

// TestClientSaturationWarning: send says on stderr when its own schedule
// lag passes --client-lag-limit (1ns: every request takes longer than
// that to build), and the run still exits 0: the requests succeeded.
func TestClientSaturationWarning(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	code, out, errs := runCLI("--url", s.URL(), "--requests", "3", "--recycle", "--client-lag-limit", "1ns", in)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"schedule_lag_ns":`) || !strings.Contains(out, `"scheduled_ns":`) ||
		!strings.Contains(errs, "send: warning: the client was saturated (schedule lag p99 ") ||
		!strings.Contains(errs, "> 1ns: requests went out late): the latencies include client time") {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, bad := range []string{"--client-cpu-limit=1.5", "--client-lag-limit=-1ms"} {
		if code, _, errs := runCLI("--url", s.URL(), bad, in); code != 2 || !strings.Contains(errs, strings.SplitN(bad, "=", 2)[0]) {
			t.Errorf("%s: exit %d, %q", bad, code, errs)
		}
	}
}
