package testserver

import (
	"context"
	"sync"
	"time"
)

// The server's known capacity, for load sweeps to find (send --stages):
// MaxConcurrency requests are served at once and the rest wait their turn
// in arrival order, as an engine's waiting queue; each one served takes
// its time to first token (TTFT + PrefillPerToken per prompt token) and
// then 1/TokensPerSecond per output token. A request's service time is a
// function of the request alone, so under a closed-loop load of c > N
// sessions the queued requests wait a whole service time: the verdict of
// a TTFT objective between the two does not depend on the machine's load.

// admit waits for a place among the MaxConcurrency served (at once
// without a limit); release gives it back, once (later calls do
// nothing). ok is false when the client went away while it waited.
func (s *Server) admit(ctx context.Context) (release func(), ok bool) {
	if s.slots == nil {
		return func() {}, true
	}
	s.waiting.Add(1)
	select {
	case s.slots <- struct{}{}:
		s.waiting.Add(-1)
	case <-ctx.Done():
		s.waiting.Add(-1)
		return nil, false
	}
	s.running.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.running.Add(-1)
			<-s.slots
		})
	}, true
}

// Load is the requests being served and those waiting for a place (with
// MaxConcurrency; running counts only admitted requests).
func (s *Server) Load() (running, waiting int) {
	return int(s.running.Load()), int(s.waiting.Load())
}

// prefill is the time to the first token of a prompt of n tokens.
func (s *Server) prefill(n int) time.Duration {
	return s.cfg.TTFT + time.Duration(n)*s.cfg.PrefillPerToken
}
