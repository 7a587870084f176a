package send

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestRecordsCarryModelPin (#27 item 17): every request record, dry run
// or live, carries its conversation's composed_for, so measure can tell
// when it counts with another model; a conversation without one writes
// none.
func TestRecordsCarryModelPin(t *testing.T) {
	pin := &records.ModelPin{Tokenizer: "ORG/NAME@abc", TokenizerSHA256: strings.Repeat("a", 64),
		ChatTemplateApplied: true, ChatTemplateSHA256: strings.Repeat("b", 64), Now: "2025-07-10T12:00:00Z"}
	a, b := conv("a", 0, cachebust.None, "", "x", "y"), conv("b", 1, cachebust.None, "", "z")
	a.ComposedFor = pin
	convs := []records.Conversation{a, b}
	check := func(what string, out []byte) {
		n := 0
		for line := range bytes.Lines(out) {
			testutil.ValidateSchema(t, "request.schema.json", line)
			var r records.Request
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			switch {
			case r.ConversationID == "a" && (r.ComposedFor == nil || *r.ComposedFor != *pin):
				t.Errorf("%s: %s turn %d: composed_for %+v, want %+v", what, r.ConversationID, r.Turn, r.ComposedFor, pin)
			case r.ConversationID == "b" && r.ComposedFor != nil:
				t.Errorf("%s: b: composed_for %+v, want none", what, r.ComposedFor)
			}
			n++
		}
		if n != 3 {
			t.Errorf("%s: %d records, want 3", what, n)
		}
	}
	var dry bytes.Buffer
	if _, err := DryRun(&dry, convs, newBuilder(t, PayloadOptions{}), Shard{}, FormatJSONL); err != nil {
		t.Fatal(err)
	}
	check("dry run", dry.Bytes())
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	var live bytes.Buffer
	if _, err := Run(context.Background(), &live, convs, newBuilder(t, PayloadOptions{Stream: true}),
		Config{URL: s.URL(), Concurrency: 2, Timeout: time.Minute}, Wiring{}); err != nil {
		t.Fatal(err)
	}
	check("live", live.Bytes())
}
