package send

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
)

// TestDuplicateConversationIDsRefused: two records with one conversation id
// (a compose output concatenated twice) would get the same cache-bust
// marker and defeat it; send refuses them, naming both lines (issue 11,
// item 15).
func TestDuplicateConversationIDsRefused(t *testing.T) {
	a := mustLine(t, conv("conv-0", 0, cachebust.FirstTurnPrefix, "", "x"))
	b := mustLine(t, conv("conv-1", 1, cachebust.FirstTurnPrefix, "", "y"))
	_, err := ReadConversations(strings.NewReader(a+"\n"+b+"\n"+a+"\n"), "in.jsonl")
	want := `in.jsonl:3: field "id": conversation id "conv-0" repeats line 1`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
	if got, err := ReadConversations(strings.NewReader(a+"\n"+b+"\n"), "in.jsonl"); err != nil || len(got) != 2 {
		t.Errorf("distinct ids: %d conversations, %v", len(got), err)
	}
}
