package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadTokenizerIsUsage (#27 item 18): a --tokenizer that names no file,
// folder or Hub id, or a folder without tokenizer.json, is a bad flag:
// exit 2, nothing written (it was 1); --chat-template without a mode that
// renders it is refused by the shared flag check.
func TestBadTokenizerIsUsage(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tokenizer", filepath.Join(empty, "nothing", "here")}, "no such file or folder"},
		{[]string{"--tokenizer", empty}, "no tokenizer.json (nor tekken.json, one tokenizer.model.v*, tiktoken.model or *.tiktoken) in this folder"},
	} {
		code, out, errs := runCLI(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
	tmpl := filepath.Join(empty, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{{ messages }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("--chat-template", tmpl); code != 2 || !strings.Contains(errs, "--chat-template applies with --apply-chat-template or --verify-url only") {
		t.Errorf("--chat-template alone: exit %d, %q", code, errs)
	}
}
