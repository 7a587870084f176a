package testserver

import "testing"

// StartTest starts a server for cfg on a free loopback port and closes it
// when the test ends, failing the test if it cannot start.
func StartTest(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
