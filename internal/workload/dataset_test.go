package workload

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

func str(s string) *string { return &s }

func TestReadDatasetFormats(t *testing.T) {
	for _, tt := range []struct {
		name, in, format string
		want             []Dialog
		skipped          int
	}{
		{"sharegpt array", `[{"id": "x", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}, {"from": "human", "value": "more"}]},
 {"conversations": [{"from": "gpt", "value": "opens with a reply"}]},
 {"system": "be brief", "conversations": [{"from": "user", "value": "q"}, {"from": "assistant", "value": "a"}]}]`,
			FormatShareGPT, []Dialog{
				{Line: 1, InArray: true, Turns: []DialogTurn{{User: "hi", Reply: str("hello")}, {User: "more", Reply: nil}}},
				{Line: 3, InArray: true, System: str("be brief"), Turns: []DialogTurn{{User: "q", Reply: str("a")}}},
			}, 1},
		{"sharegpt jsonl", "\ufeff" + `{"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}` + "\n",
			FormatShareGPT, []Dialog{{Line: 1, System: str("s"), Turns: []DialogTurn{{User: "q", Reply: str("a")}}}}, 0},
		// Messages keep their shape: text parts stay parts (the last one is
		// the text --isl resizes), tools, tool calls and results, names and
		// reasoning are kept; a final assistant message is the last reply.
		{"openai", `{"messages": [{"role": "developer", "content": "d"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, {"role": "assistant", "content": "c"}]}
{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]}
{"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}
{"messages": [{"role": "user", "content": "q", "name": "bob"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1"}], "reasoning": "r"}, {"role": "tool", "tool_call_id": "c1", "content": "42"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "q2"}, {"role": "assistant", "content": "end"}]}
{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}
{"messages": [{"role": "user", "content": []}]}
{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}, {"type": "text", "text": "t"}, {"type": "image_url", "image_url": "https://x/y.jpg"}]}]}
{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}}, {"type": "text", "text": "t"}]}]}
{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}
{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}, {"type": "text", "text": "t"}]}]}`,
			FormatOpenAI, []Dialog{
				{Line: 1, System: str("d"), Turns: []DialogTurn{{User: "b", Reply: str("c"), UserMessage: &records.Message{Role: "user", Parts: []string{"a", "b"}}}}},
				{Line: 2, Turns: []DialogTurn{{User: "x"}}, Tools: []byte(`[{"type": "function"}]`)},
				{Line: 4, Turns: []DialogTurn{{User: "q", Reply: str("a"), UserMessage: &records.Message{Role: "user", Content: str("q"), Name: "bob"},
					History: []records.Message{{Role: "assistant", ToolCalls: []byte(`[{"id": "c1"}]`), ReasoningContent: "r"},
						{Role: "tool", Content: str("42"), ToolCallID: "c1"}, {Role: "assistant", Content: str("a")}}},
					{User: "q2", Reply: str("end")}}},
				// Image parts of a user message are kept in their places;
				// one with a detail, a message of images only and an
				// assistant's image are not replayed.
				{Line: 7, Turns: []DialogTurn{{User: "t", UserMessage: &records.Message{Role: "user", Parts: []string{"t"},
					Images: []records.PartImage{{At: 0, URL: "data:image/png;base64,AAAA"}, {At: 2, URL: "https://x/y.jpg"}}}}}},
			}, 6},
		{"prompts jsonl", `{"prompt": "one"}` + "\n\n" + `{"prompt": "two", "other": 1}`,
			FormatPrompts, []Dialog{{Line: 1, Turns: []DialogTurn{{User: "one", Reply: nil}}}, {Line: 3, Turns: []DialogTurn{{User: "two", Reply: nil}}}}, 0},
		{"text lines", "first line\n\n  \nsecond {not json}\r\n",
			FormatPrompts, []Dialog{{Line: 1, Turns: []DialogTurn{{User: "first line", Reply: nil}}}, {Line: 4, Turns: []DialogTurn{{User: "second {not json}", Reply: nil}}}}, 0},
	} {
		got, skipped, format, err := ReadDataset(strings.NewReader(tt.in), "d", "")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if format != tt.format || len(skipped) != tt.skipped || !sameDialogs(got, tt.want) {
			t.Errorf("%s: format %s, skipped %v, dialogs %s", tt.name, format, skipped, show(got))
		}
	}
}

func sameDialogs(a, b []Dialog) bool {
	return reflect.DeepEqual(a, b)
}

func show(ds []Dialog) string {
	var sb strings.Builder
	for _, d := range ds {
		sb.WriteString("[" + itoa(d.Line))
		if d.System != nil {
			sb.WriteString(" sys=" + *d.System)
		}
		for _, t := range d.Turns {
			sb.WriteString(" u=" + t.User)
			if t.Reply != nil {
				sb.WriteString(" r=" + *t.Reply)
			}
			if t.UserMessage != nil {
				fmt.Fprintf(&sb, " um=%+v", *t.UserMessage)
			}
			for _, h := range t.History {
				fmt.Fprintf(&sb, " h=%+v", h)
			}
		}
		if d.Tools != nil {
			sb.WriteString(" tools=" + string(d.Tools))
		}
		sb.WriteString("]")
	}
	return sb.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReadDatasetErrors(t *testing.T) {
	for _, tt := range []struct{ in, format, want string }{
		{`{"conversations": [{"from": "robot", "value": "x"}]}`, "", `d:1: field "conversations.0.from": unknown speaker "robot"`},
		{`{"conversations": [{"from": "human"}]}`, "", `d:1: field "conversations.0.value": missing`},
		{`{"conversations": "x"}`, "", `d:1: field "conversations"`},
		{`[{"conversations": [{"from": "human", "value": 3}]}]`, "", `d: record 1 of the JSON array: field "conversations.0.value"`},
		{`{"messages": [{"role": "wizard", "content": "x"}]}`, "", `d:1: field "messages.0.role": unknown role "wizard"`},
		{`{"messages": [{"role": "user", "content": 5}]}`, "", `d:1: field "messages.0.content": neither a string`},
		{`{"messages": [{"content": "x"}]}`, "", `d:1: field "messages.0.role": missing`},
		{`{"prompt": 1}`, "prompts", `d:1: field "prompt"`},
		{`{"text": "x"}`, "prompts", `d:1: field "prompt": missing`},
		{"{\"messages\": []}\n{\"oops\"", "", `d:2: invalid JSON`},
		{"", "", "d: no conversations"},
		{"\xff\xfe", "", "d: not UTF-8"},
		{"x", "csv", `--dataset-format "csv"`},
	} {
		_, _, _, err := ReadDataset(strings.NewReader(tt.in), "d", tt.format)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.want)
		}
	}
}

// Any input gives dialogs or an error; every dialog has a user turn.
func FuzzReadDataset(f *testing.F) {
	f.Add(`[{"conversations": [{"from": "human", "value": "hi"}]}]`)
	f.Add(`{"messages": [{"role": "user", "content": "x"}]}`)
	f.Add("plain\ntext")
	f.Fuzz(func(t *testing.T, in string) {
		ds, _, _, err := ReadDataset(strings.NewReader(in), "f", "")
		if err != nil {
			return
		}
		for _, d := range ds {
			if len(d.Turns) == 0 {
				t.Fatalf("dialog without turns: %+v", d)
			}
		}
	})
}

// TestToolOutputIsNotADataset (#27 item 18): islkit's own records given
// as a dataset are named, with what to run instead, whatever the format
// asked (a record's missing "prompt" field said nothing of that).
func TestToolOutputIsNotADataset(t *testing.T) {
	for _, tc := range []struct{ data, format, want string }{
		{`{"kind":"islkit.request","schema_version":1,"payload":{}}` + "\n", "", "f: this is send's (or measure's) output (islkit.request records): measure it"},
		{`{"kind":"islkit.conversation","schema_version":1,"turns":[]}` + "\n", "prompts", "f: this is compose's output (islkit.conversation records): send it"},
		{`{"kind":"islkit.probe","schema_version":1}` + "\n", "", "f: this is probe's output"},
		{"{\n  \"kind\": \"islkit.summary\",\n  \"requests\": 1\n}\n", "", "f: this is measure's summary"},
	} {
		_, _, _, err := ReadDataset(strings.NewReader(tc.data), "f", tc.format)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
	// A dataset whose records merely have a "kind" is read as one.
	if d, _, _, err := ReadDataset(strings.NewReader(`{"kind":"chat","prompt":"hi"}`+"\n"), "f", ""); err != nil || len(d) != 1 {
		t.Errorf("a prompt with a kind: %v %v", d, err)
	}
}

// TestArraySkipsAreRecords (#27 item 18): a ShareGPT JSON array's
// skipped entries and dialogs are its records, not lines.
func TestArraySkipsAreRecords(t *testing.T) {
	data := `[{"conversations":[{"from":"human","value":"a"}]},
{"conversations":[{"from":"gpt","value":"b"}]}]`
	d, skipped, _, err := ReadDataset(strings.NewReader(data), "f", "")
	if err != nil || len(d) != 1 || len(skipped) != 1 {
		t.Fatalf("%v %v %v", d, skipped, err)
	}
	if d[0].Pos() != "record 1 of the JSON array" || skipped[0].Where("f") != "f: record 2 of the JSON array" {
		t.Errorf("dialog at %q, skipped at %q", d[0].Pos(), skipped[0].Where("f"))
	}
}
