package tokenizer

import (
	"strings"
	"testing"
)

// TestTokenizerConfigGivenAsTokenizerSaysSo: tokenizer_config.json is the
// wrong file of the pair; the error says which file to give instead of
// "model: missing" (issue 11, item 13).
func TestTokenizerConfigGivenAsTokenizerSaysSo(t *testing.T) {
	cfg := `{"add_bos_token": false, "chat_template": "{{ messages }}", "model_max_length": 131072, "tokenizer_class": "Qwen2Tokenizer"}`
	_, err := FromJSON([]byte(cfg))
	if err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("FromJSON(tokenizer_config.json) = %v, want an error naming both files", err)
	}
	// Something else without a model still says the model is missing.
	if _, err := FromJSON([]byte(`{"version": "1.0"}`)); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("FromJSON without model = %v", err)
	}
}
