package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestWarnsOnAnotherModel (#27 item 17): a send record composed for the
// embedded Qwen3 (its composed_for: the SHA-256 of Qwen3's tokenizer.json,
// hashed here from the file) measured with Qwen3 is not warned about;
// measured with Llama 3's tokenizer, or with another chat template than
// the record's, measure warns on stderr and in the summary JSON.
func TestWarnsOnAnotherModel(t *testing.T) {
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "modelsrc", "defaultmodel", "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		t.Fatal(err)
	}
	qwen := hex.EncodeToString(h.Sum(nil))
	rec := func(pin string) string {
		return fmt.Sprintf(`{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":3,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":true,"composed_for":%s,"payload":{"model":"m","messages":[{"role":"user","content":"Hello world"}]}}`+"\n", pin)
	}
	bare := fmt.Sprintf(`{"tokenizer":"Qwen/Qwen3 (embedded)","tokenizer_sha256":%q,"chat_template_applied":false}`, qwen)
	summary := filepath.Join(t.TempDir(), "s.json")
	if code, _, errs := runCLI(rec(bare), "--summary-json", summary); code != 0 || strings.Contains(errs, "another model") {
		t.Fatalf("the records' own model: exit %d, stderr %q", code, errs)
	}
	if data, _ := os.ReadFile(summary); strings.Contains(string(data), "model_mismatch") {
		t.Errorf("the records' own model: summary %s", data)
	}
	llama := testutil.RefModel(t, "llama3")
	code, _, errs := runCLI(rec(bare), "--tokenizer", llama, "--summary-json", summary)
	if code != 0 || !strings.Contains(errs, "measure: warning: 1 request(s) were composed for another model than measure counts with (tokenizer "+llama) {
		t.Errorf("llama3 on qwen3 records: exit %d, stderr %q", code, errs)
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var sum struct {
		ModelMismatch *struct {
			Requests int    `json:"requests"`
			First    string `json:"first"`
		} `json:"model_mismatch"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if m := sum.ModelMismatch; m == nil || m.Requests != 1 || !strings.HasPrefix(m.First, "tokenizer "+llama+" (tokenizer.json sha256 ") || !strings.HasSuffix(m.First, "not Qwen/Qwen3 (embedded) ("+qwen+")") {
		t.Errorf("summary model_mismatch %+v", m)
	}
	other := strings.Replace(bare, `"chat_template_applied":false`, `"chat_template_applied":true,"chat_template_sha256":"`+strings.Repeat("0", 64)+`"`, 1)
	if _, _, errs := runCLI(rec(other), "--apply-chat-template"); !strings.Contains(errs, "(chat template sha256") {
		t.Errorf("another template: stderr %q", errs)
	}
	if _, _, errs := runCLI(rec(other)); strings.Contains(errs, "another model") {
		t.Errorf("another template, counted bare: stderr %q", errs)
	}
}
