package send

import (
	"bytes"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/records"
)

// DryRunResponseID stands for the id a live run's previous answer would
// have, in the bodies of a chained dry run.
func DryRunResponseID(c *records.Conversation, turn int) string {
	return fmt.Sprintf("dry-run:%s:%d", c.ID, turn)
}

// chainBody is the body a turn of send --responses-chain sends, made from
// full, the whole conversation's Responses body: with prevID, "input" cut
// to the items after its last assistant item (the new turn: the server
// takes the rest from the stored response) and "previous_response_id"
// added; "store": true either way, so the answer can be chained to.
// "instructions" stay: vLLM filters the system messages of the stored
// history out and puts the current request's instructions first
// (docs/reference/server-preprocessing.md §3), so the conversation it
// reconstructs is full's.
func chainBody(full []byte, prevID string) ([]byte, error) {
	obj, err := jsonobj.Parse(full)
	if err != nil {
		return nil, err
	}
	if prevID != "" {
		raw, _ := obj.Get("input")
		items, err := jsonobj.Elements(raw)
		if err != nil {
			return nil, fmt.Errorf("chaining a Responses body: input: %w", err)
		}
		last := -1
		for i, it := range items {
			var m struct {
				Role string `json:"role"`
			}
			if json.Unmarshal(it, &m) == nil && m.Role == "assistant" {
				last = i
			}
		}
		var arr bytes.Buffer
		arr.WriteByte('[')
		for i, it := range items[last+1:] {
			if i > 0 {
				arr.WriteByte(',')
			}
			arr.Write(it)
		}
		arr.WriteByte(']')
		if obj, err = obj.Set("input", json.RawMessage(arr.Bytes())); err != nil {
			return nil, err
		}
		if obj, err = obj.Set("previous_response_id", prevID); err != nil {
			return nil, err
		}
	}
	if obj, err = obj.Set("store", true); err != nil {
		return nil, err
	}
	return obj.Marshal(), nil
}

// chain makes rec and built a chained turn's: the body sent (and the
// record's payload) chained to prevID, the whole conversation's body kept
// as what the server reconstructs (rec.Chained).
func (b *Builder) chain(built *Built, rec *records.Request, prevID string) error {
	if !b.opts.ResponsesChain {
		return nil
	}
	body, err := chainBody(built.Body, prevID)
	if err != nil {
		return err
	}
	if prevID != "" {
		rec.Chained = &records.Chain{PreviousResponseID: prevID, Reconstructed: built.Body}
	}
	built.Body = body
	rec.Payload = body
	return nil
}
