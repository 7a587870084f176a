package send

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// TestUsageWithoutPromptTokensRecordedAsAbsent: a server's usage without
// prompt_tokens is recorded without it, not as a count of 0 that measure
// would read as the server's ISL (issue 11, item 11).
func TestUsageWithoutPromptTokensRecordedAsAbsent(t *testing.T) {
	in := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"completion_tokens\":3,\"total_tokens\":3}}\n\n" +
		"data: [DONE]\n\n"
	var res records.Result
	if err := readStream(strings.NewReader(in), time.Now(), &res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Usage)
	if res.Usage == nil || res.Usage.CompletionTokens != 3 || strings.Contains(string(b), "prompt_tokens") {
		t.Errorf("usage %s, want completion tokens and no prompt_tokens", b)
	}
}
