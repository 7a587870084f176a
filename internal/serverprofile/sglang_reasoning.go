package serverprofile

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/jsonobj"
)

// sglangEfforts are the effort levels SGLang 0.5.23 takes as strings.
var sglangEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true, "ultra": true, "max": true}

// sglangReasoning is ChatCompletionRequest.normalize_reasoning_inputs
// (protocol.py, SGLang 0.5.23): a "reasoning" object's effort (or
// reasoning_effort) replaces the top-level reasoning_effort, a numeric one
// as a float; its enabled (or enable) turns thinking on; an effort then
// decides it, off for "none". effort is what the template gets as
// reasoning_effort (nil: none); thinking, when not nil, is the default of
// chat_template_kwargs' thinking and enable_thinking.
func sglangReasoning(body jsonobj.Object) (effort any, thinking *bool, err error) {
	var on *bool
	set := func(v bool) *bool { return &v }
	if raw := member(body, "reasoning_effort"); raw != nil {
		effort = json.RawMessage(raw)
	}
	if raw := member(body, "reasoning"); raw != nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		r, err := jsonobj.Members(raw)
		if err != nil {
			return nil, nil, err
		}
		e := member(r, "effort")
		if e == nil {
			e = member(r, "reasoning_effort")
		}
		if e != nil {
			s, isString := str(e)
			t := string(bytes.TrimSpace(e))
			switch {
			case isString && sglangEfforts[s]:
				effort = json.RawMessage(e)
			case !isString && t != "true" && t != "false" && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
				f, err := strconv.ParseFloat(t, 64)
				if err != nil {
					return nil, nil, refuse(SGLang, "invalid reasoning effort", "reasoning.effort %s", t)
				}
				effort = f
			case isString:
				// Python's float() of the string, as the top-level field's
				// lax union coerces it.
				f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil {
					return nil, nil, refuse(SGLang, "invalid reasoning effort", "reasoning.effort %q", s)
				}
				effort = f
			default:
				return nil, nil, refuse(SGLang, "invalid reasoning effort", "reasoning.effort %s", t)
			}
		}
		enabled := member(r, "enabled")
		if enabled == nil {
			enabled = member(r, "enable")
		}
		if s, ok := str(enabled); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "1", "true", "yes", "y", "on":
				on = set(true)
			}
		} else if enabled != nil && pyTruthy(enabled) {
			on = set(true)
		}
	}
	thinking = on
	switch e := effort.(type) {
	case json.RawMessage:
		s, _ := str(e)
		thinking = set(s != "none")
	case float64:
		thinking = set(true)
	}
	return effort, thinking, nil
}
