package regex

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFallbackTimesOutOnCatastrophicBacktracking: a Split pattern from an
// untrusted tokenizer.json that backtracks exponentially must end with a
// TimeoutError instead of hanging the run (issue 11, item 18). The input
// would take longer than the age of the universe; the timeout is made
// short so the test is quick, and nothing depends on how fast it runs.
func TestFallbackTimesOutOnCatastrophicBacktracking(t *testing.T) {
	defer func(d time.Duration) { MatchTimeout = d }(MatchTimeout)
	MatchTimeout = 50 * time.Millisecond
	m, err := CompileFallback(`(a+)+b`)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		m.FindAll(strings.Repeat("a", 64)+"c", nil)
	}()
	var got any
	select {
	case got = <-done:
	case <-time.After(time.Minute): // only turns a hang into a failure
		t.Fatal("FindAll still running after a minute")
	}
	err, _ = got.(error)
	var te *TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "(a+)+b") {
		t.Fatalf("FindAll ended with %v, want a *TimeoutError naming the pattern", got)
	}
}
