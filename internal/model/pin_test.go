package model

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestPinAndLoadPinned (#21 item 5): a loaded model's pin holds the
// SHA-256 of its tokenizer.json and chat template file (hashed here from
// the files' bytes), its source, --chat-template and clock; LoadPinned
// loads that model from the pin alone, and refuses another tokenizer or
// template as a usage error naming what the pin came from and the fix.
func TestPinAndLoadPinned(t *testing.T) {
	dir := testutil.RefModel(t, "llama3")
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}{{ m.content }}|{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(Options{Tokenizer: dir, ChatTemplate: tmpl, Now: "2025-07-10T12:00:00"})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := m.Pin(true)
	if err != nil {
		t.Fatal(err)
	}
	want := records.ModelPin{Tokenizer: dir, TokenizerSHA256: fileSHA256(t, filepath.Join(dir, "tokenizer.json")),
		ChatTemplateApplied: true, ChatTemplate: tmpl, ChatTemplateSHA256: fileSHA256(t, tmpl), Now: "2025-07-10T12:00:00Z"}
	if pin != want {
		t.Fatalf("pin %+v\nwant %+v", pin, want)
	}
	got, err := LoadPinned(pin, Options{}, "the records", "fix it")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source.Name != dir || got.ChatTemplate != tmpl || got.Template == nil || !got.Now.Equal(m.Now) {
		t.Errorf("loaded from the pin: %s, template %q, now %v", got.Source.Name, got.ChatTemplate, got.Now)
	}
	if d, err := got.Differs(pin, true); d != "" || err != nil {
		t.Errorf("the pin's own model differs: %q %v", d, err)
	}
	other := testutil.RefModel(t, "mistral7b")
	_, err = LoadPinned(pin, Options{Tokenizer: other}, "the records", "fix it")
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), "model mismatch: the records: made with "+dir) || !strings.HasSuffix(err.Error(), "; fix it") {
		t.Errorf("another tokenizer: %v", err)
	}
	_, err = LoadPinned(pin, Options{ChatTemplate: filepath.Join(dir, "tokenizer_config.json")}, "the records", "fix it")
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), "chat template mismatch") {
		t.Errorf("another template: %v", err)
	}
	o, err := Load(Options{Tokenizer: other})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := o.Differs(pin, true); !strings.Contains(d, "tokenizer "+other) {
		t.Errorf("Differs for another tokenizer: %q", d)
	}
	// A bare pin loads no template: the counts were bare.
	pin.ChatTemplateApplied, pin.ChatTemplate, pin.ChatTemplateSHA256 = false, "", ""
	if got, err := LoadPinned(pin, Options{}, "the records", "fix it"); err != nil || got.Template != nil {
		t.Errorf("bare pin: template %v, %v", got, err)
	}
}
