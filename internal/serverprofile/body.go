package serverprofile

import (
	"bytes"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// body holds the request-level fields the rules read.
type body struct {
	addGenerationPrompt  *bool
	continueFinalMessage *bool
	addSpecialTokens     bool
	tools                json.RawMessage // nil when absent or null
	toolChoice           json.RawMessage
	kwargs               jsonobj.Object // chat_template_kwargs; nil when absent or null
	hasKwargs            bool
	documents            json.RawMessage
	reasoningEffort      json.RawMessage
	obj                  jsonobj.Object // the whole body
}

func readBody(ex *extract.Inputs) (*body, error) {
	b := &body{obj: ex.Body}
	obj := ex.Body
	var err error
	if b.addGenerationPrompt, err = optBool(obj, "add_generation_prompt"); err != nil {
		return nil, err
	}
	if b.continueFinalMessage, err = optBool(obj, "continue_final_message"); err != nil {
		return nil, err
	}
	if v, err := optBool(obj, "add_special_tokens"); err != nil {
		return nil, err
	} else if v != nil {
		b.addSpecialTokens = *v
	}
	b.tools = member(obj, "tools")
	b.toolChoice = member(obj, "tool_choice")
	b.documents = member(obj, "documents")
	b.reasoningEffort = member(obj, "reasoning_effort")
	if raw := member(obj, "chat_template_kwargs"); raw != nil {
		if b.kwargs, err = jsonobj.Members(raw); err != nil {
			return nil, fmt.Errorf(`payload: "chat_template_kwargs" is not an object`)
		}
		b.hasKwargs = true
	}
	return b, nil
}

// member is obj[key], nil when absent or null.
func member(obj jsonobj.Object, key string) json.RawMessage {
	raw, ok := obj.Get(key)
	if !ok || isNull(raw) {
		return nil
	}
	return raw
}

func optBool(obj jsonobj.Object, key string) (*bool, error) {
	raw := member(obj, key)
	if raw == nil {
		return nil, nil
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		v := true
		return &v, nil
	case "false":
		v := false
		return &v, nil
	}
	return nil, fmt.Errorf("payload: %q must be true or false", key)
}

func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func isString(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// str decodes a JSON string member; ok is false for any other value.
func str(raw []byte) (string, bool) {
	if !isString(raw) {
		return "", false
	}
	s, err := jsonobj.String(bytes.TrimSpace(raw))
	return s, err == nil
}
