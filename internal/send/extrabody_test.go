package send

import (
	"strings"
	"testing"
)

// TestExtraBodyRefusesOwnedKeys: --extra-body may not set a field send
// owns, or the record would claim another max_tokens (or model, or
// stream) than the payload carries; the error names the flag that sets
// the field (issue 11 item 10).
func TestExtraBodyRefusesOwnedKeys(t *testing.T) {
	for key, flag := range map[string]string{
		"max_tokens":            "--osl",
		"max_completion_tokens": "--osl",
		"stream":                "--stream",
		"stream_options":        "--stream",
		"model":                 "--model",
		"messages":              "conversations",
	} {
		_, err := NewBuilder(PayloadOptions{ExtraBody: `{"ignore_eos":true,"` + key + `":1}`}, nil)
		if err == nil || !strings.Contains(err.Error(), `"`+key+`"`) || !strings.Contains(err.Error(), flag) {
			t.Errorf("--extra-body with %s: %v; want a refusal naming %s", key, err, flag)
		}
	}
	if _, err := NewBuilder(PayloadOptions{ExtraBody: `{"ignore_eos":true,"min_tokens":4,"chat_template_kwargs":{}}`}, nil); err != nil {
		t.Errorf("other keys refused: %v", err)
	}
}
