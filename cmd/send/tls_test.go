package main

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
)

// TestTLSFlags: a server with a self-signed certificate is refused by
// default, reached with --insecure or with its certificate as --ca-cert
// (issue 11 item 20).
func TestTLSFlags(t *testing.T) {
	ts, err := testserver.New(testserver.Config{NoTokenize: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(ts)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	in := writeInput(t, convLine)
	if code, _, errs := runCLI("--url", srv.URL, in); code != 1 || !strings.Contains(errs, "certificate") {
		t.Errorf("self-signed without flags: exit %d, stderr %q; want 1 and a certificate error", code, errs)
	}
	for _, flags := range [][]string{{"--insecure"}, {"--ca-cert", ca}} {
		code, out, errs := runCLI(append([]string{"--url", srv.URL, in}, flags...)...)
		if code != 0 || !strings.Contains(out, `"ok":true`) {
			t.Errorf("%v: exit %d, stderr %q, out %q", flags, code, errs, out)
		}
	}
	notPEM := writeInput(t, "not a certificate")
	for _, flags := range [][]string{
		{"--ca-cert", notPEM},
		{"--ca-cert", filepath.Join(t.TempDir(), "missing.pem")},
		{"--insecure", "--ca-cert", ca},
		{"--insecure", "--dry-run"},
	} {
		args := append([]string{in}, flags...)
		if flags[len(flags)-1] != "--dry-run" {
			args = append(args, "--url", srv.URL)
		}
		if code, _, errs := runCLI(args...); code != 2 || !strings.Contains(errs, flags[0]) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming %s", flags, code, errs, flags[0])
		}
	}
}
