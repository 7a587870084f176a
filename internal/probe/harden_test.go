package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/modelsrc"
)

// TestGarbledConfigNamesItsFolder: an unreadable tokenizer_config.json is
// reported with the folder it is in, not as a bare file name that could be
// any model's (issue 11, item 13).
func TestGarbledConfigNamesItsFolder(t *testing.T) {
	def, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tokJSON, err := def.ReadFile("tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my-model")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), tokJSON, 0o644)
	os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"chat_template": "x", garbled`), 0o644)
	for _, apply := range []bool{false, true} {
		_, err := Run(Options{Tokenizer: dir, CacheBust: cachebust.FirstTurnPrefix, ApplyChatTemplate: apply})
		if err == nil || !strings.HasPrefix(err.Error(), dir+": ") || !strings.Contains(err.Error(), "tokenizer_config.json") {
			t.Errorf("apply %v: %v, want an error naming %s and tokenizer_config.json", apply, err, dir)
		}
	}
}
