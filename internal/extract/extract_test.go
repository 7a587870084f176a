package extract

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The AIPerf record-processor cases: media parts dropped, text parts of a
// message joined with "" in the chat view, every text kept for the bare
// count, tool definitions and tool calls as texts.
func TestExtractFollowsAIPerf(t *testing.T) {
	body := `{"model":"m","messages":[
	  {"role":"system","content":"Be brief."},
	  {"role":"user","content":[{"type":"text","text":"[rid:abc123def456]"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"What is this?"},{"type":"input_audio","input_audio":{}},{"type":"video_url"}]},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}}]},
	  {"role":"tool","content":"42"}],
	 "tools":[{"type":"function","function":{"name":"look","description":"Look it up","parameters":{"type":"object", "properties":{}}}}],
	 "chat_template_kwargs":{"enable_thinking":false}}`
	ex, err := Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantTexts := []string{"Be brief.", "[rid:abc123def456]", "What is this?", "look", `{"q":1}`, "42", "look", "Look it up", `{"type":"object","properties":{}}`}
	if !slices.Equal(ex.Texts, wantTexts) {
		t.Errorf("Texts = %q\nwant %q", ex.Texts, wantTexts)
	}
	if len(ex.Chat) != 4 {
		t.Fatalf("chat view has %d messages, want 4", len(ex.Chat))
	}
	if m := ex.Chat[1]; m.Role != "user" || m.Content("") != "[rid:abc123def456]What is this?" || m.Content("\n") != "[rid:abc123def456]\nWhat is this?" {
		t.Errorf("user message %+v", m)
	}
	if m := ex.Chat[2]; m.Role != "assistant" || m.Content("") != "" || string(m.ToolCalls) != `[{"id":"1","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}}]` {
		t.Errorf("assistant message %+v", m)
	}
	if ex.Media.Images != 1 || ex.Media.Audios != 1 || ex.Media.Videos != 1 {
		t.Errorf("Media = %+v", ex.Media)
	}
	if !ex.MultiTextParts || ex.NumMessages != 4 {
		t.Errorf("MultiTextParts %v, NumMessages %d", ex.MultiTextParts, ex.NumMessages)
	}
	if ex.Kwargs["enable_thinking"] != false {
		t.Errorf("Kwargs = %v", ex.Kwargs)
	}
	if got := ex.Contents()[1]; got != "[rid:abc123def456]What is this?" {
		t.Errorf("Contents()[1] = %q", got)
	}
}

func TestExtractBadPayloads(t *testing.T) {
	cases := map[string]string{
		`{"model":"m"}`:                              "no \"messages\"",
		`{"messages":null}`:                          "no \"messages\"",
		`{"messages":"hi"}`:                          "not an array",
		`{"messages":[1]}`:                           "not an object",
		`{"messages":[{"role":"user","content":5}]}`: "neither a string nor a list",
		`{"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`: "is not a string",
		`{"messages":[],"chat_template_kwargs":[1]}`:                          "not an object",
		`{"messages":[`: "payload",
	}
	for body, want := range cases {
		_, err := Body([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Body(%s) = %v, want an error mentioning %q", body, err, want)
		}
	}
	if _, err := Body([]byte(`{"model":"m"}`)); !errors.Is(err, ErrNoMessages) {
		t.Errorf("missing messages is not ErrNoMessages: %v", err)
	}
}

func FuzzBody(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}],"tools":[{"function":{"name":"x"}}]}`,
		`{"messages":[{"role":1,"content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := Body(body)
		if err != nil {
			return
		}
		// One content per chat-view message; tool calls are JSON.
		if n := len(ex.Contents()); n != ex.NumMessages {
			t.Fatalf("view has %d contents, NumMessages %d", n, ex.NumMessages)
		}
		for _, m := range ex.Chat {
			if m.ToolCalls != nil && !json.Valid(m.ToolCalls) {
				t.Fatalf("tool calls %q are not JSON", m.ToolCalls)
			}
		}
	})
}

// referenceChat is the chat view as Python's dict lookups see the body,
// decoded with encoding/json: roles that are strings, content a string or
// the "text" of object parts whose "type" is "text" (null text is "").
func referenceChat(body []byte) (roles []string, contents []string, ok bool) {
	var doc struct {
		Messages []any `json:"messages"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return nil, nil, false
	}
	for _, m := range doc.Messages {
		msg, _ := m.(map[string]any)
		var parts []string
		switch c := msg["content"].(type) {
		case string:
			parts = []string{c}
		case []any:
			for _, p := range c {
				part, isObj := p.(map[string]any)
				if !isObj || part["type"] != "text" {
					continue
				}
				switch text := part["text"].(type) {
				case string:
					parts = append(parts, text)
				case nil:
					if _, present := part["text"]; !present {
						return nil, nil, false
					}
					parts = append(parts, "")
				default:
					return nil, nil, false
				}
			}
		case nil:
		default:
			return nil, nil, false
		}
		if role, isString := msg["role"].(string); isString {
			roles = append(roles, role)
			contents = append(contents, strings.Join(parts, ""))
		}
	}
	return roles, contents, true
}

func TestExtractMatchesReferenceDecoding(t *testing.T) {
	for _, body := range []string{
		`{"messages":[{"role":"user","content":"a\n\u00e9\ud83d\ude00 \ud800"}]}`,
		`{"messages":[{"Role":"user","role":"assistant","content":"x","content":"last"}]}`,
		`{"messages":[null,{"role":"user","content":[{"type":"text","text":null},{"type":"text","text":"b"},{"type":7},"s",{"type":"text","text":"c"}]}]}`,
		"{\"messages\":[{\"role\":\"r\xff\",\"content\":\"bad \xfe utf8\"}]}",
	} {
		roles, contents, ok := referenceChat([]byte(body))
		ex, err := Body([]byte(body))
		if !ok || err != nil {
			t.Fatalf("%s: reference ok %v, Body error %v", body, ok, err)
		}
		var gotRoles []string
		for _, m := range ex.Chat {
			gotRoles = append(gotRoles, m.Role)
		}
		if !slices.Equal(gotRoles, roles) || !slices.Equal(ex.Contents(), contents) {
			t.Errorf("%s:\n got roles %q contents %q\nwant roles %q contents %q", body, gotRoles, ex.Contents(), roles, contents)
		}
	}
}

// FuzzBodyReference checks the payload walker against encoding/json.
func FuzzBodyReference(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi\n"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":null}]}]}`,
		`{"messages":[{"role":"u","content":"\u00e9\ud800"},null,{"role":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		roles, contents, ok := referenceChat(body)
		ex, err := Body(body)
		if !ok || err != nil {
			return // the error cases are TestExtractBadPayloads'
		}
		var gotRoles []string
		for _, m := range ex.Chat {
			gotRoles = append(gotRoles, m.Role)
		}
		if !slices.Equal(gotRoles, roles) || !slices.Equal(ex.Contents(), contents) {
			t.Fatalf("%q:\n got roles %q contents %q\nwant roles %q contents %q", body, gotRoles, ex.Contents(), roles, contents)
		}
	})
}
