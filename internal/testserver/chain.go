package testserver

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Stored Responses, for previous_response_id: bounded and expiring, as a
// server's response store must be (vLLM keeps them in memory).
const (
	maxStored  = 10000
	storedLife = 10 * time.Minute
)

// stored is a stored response: the input items of the conversation it
// answered (as reconstructed, its instructions aside) and its output text.
type stored struct {
	input  []json.RawMessage
	output string
	at     time.Time
}

// responseStore holds stored responses, oldest first out.
type responseStore struct {
	mu    sync.Mutex
	byID  map[string]*stored
	order []string
	next  uint64
}

// newID is a fresh response id.
func (rs *responseStore) newID() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.next++
	return "resp_islkit_" + strconv.FormatUint(rs.next, 10)
}

func (rs *responseStore) put(id string, st *stored) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byID == nil {
		rs.byID = map[string]*stored{}
	}
	rs.byID[id] = st
	rs.order = append(rs.order, id)
	for len(rs.order) > maxStored || len(rs.order) > 0 && time.Since(rs.byID[rs.order[0]].at) > storedLife {
		delete(rs.byID, rs.order[0])
		rs.order = rs.order[1:]
	}
}

func (rs *responseStore) get(id string) (*stored, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st, ok := rs.byID[id]
	if ok && time.Since(st.at) > storedLife {
		return nil, false
	}
	return st, ok
}

// inputItems is a Responses input as items (a string is one user message).
func inputItems(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": json.RawMessage(raw)})
		return []json.RawMessage{item}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	return items, nil
}

// reconstruct is the conversation a chained request asks for, as vLLM
// builds it (construct_input_messages, docs/reference/
// server-preprocessing.md §3): the stored history without its system
// messages, the stored answer as an assistant message, then the new
// input; the instructions are the request's own. It returns that
// conversation's input items and a body of it to count.
func reconstruct(prev *stored, req *Request) ([]json.RawMessage, []byte, error) {
	items, err := inputItems(req.Input)
	if err != nil {
		return nil, nil, err
	}
	var all []json.RawMessage
	for _, it := range prev.input {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(it, &m) == nil && m.Role == "system" {
			continue
		}
		all = append(all, it)
	}
	answer, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant", "content": prev.output})
	all = append(append(all, answer), items...)
	body := map[string]any{"model": req.Model, "input": all}
	if req.Instructions != nil {
		body["instructions"] = req.Instructions
	}
	data, err := json.Marshal(body)
	return all, data, err
}
