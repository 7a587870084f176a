package records

import (
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/jsonl"
)

func TestDecodeChecksKindVersionAndFields(t *testing.T) {
	line := func(s string) jsonl.Line { return jsonl.Line{File: "in", Num: 3, Data: []byte(s)} }
	var c Conversation
	for in, want := range map[string]string{
		`{"kind":"islkit.probe","schema_version":1}`:                              `in:3: field "kind": got "islkit.probe", want "islkit.conversation" (is this compose's output?)`,
		`{"kind":"islkit.conversation","schema_version":2}`:                       `in:3: field "schema_version": unknown schema version 2`,
		`{"kind":"islkit.conversation","schema_version":1,"surprise":true}`:       `surprise`,
		"{\"kind\":\"islkit.conversation\",\"schema_version\":1,\"id\":\"\xff\"}": "invalid UTF-8",
	} {
		err := Decode(line(in), KindConversation, &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want %q", in, err, want)
		}
	}
	if err := Decode(line(`{"kind":"islkit.conversation","schema_version":1,"id":"c7","index":7,"turns":[]}`), KindConversation, &c); err != nil || c.ID != "c7" || c.Index != 7 {
		t.Errorf("valid record: %v, %+v", err, c)
	}
}
