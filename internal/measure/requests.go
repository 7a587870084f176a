package measure

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
)

// requestMeta is what a record says about its request besides the body.
type requestMeta struct {
	target, expected, server *int
	expectedCached, cached   *int // send's expected_cached_tokens, the server's cached_tokens
	conversationID           string
	// sizedFor is the server profile send's record was sized for ("":
	// vllm, or not said).
	sizedFor  string
	turn      *int
	marker    string           // the injected marker text, when known
	cacheBust cachebust.Target // the marker's target, when known
	maxTokens int              // the turn's max_tokens, 0 when unknown
	osl       *records.OSL     // the output against max_tokens (live records)
	chained   bool             // counted from a chained turn's reconstruction
}

// withISL measures body (a member of obj, already validated) and adds the
// "isl" member to the record; data is obj's own text, or nil when obj was
// built here.
func (m *Measurer) withISL(obj jsonobj.Object, data, body []byte, meta requestMeta, own bool) ([]byte, records.ISL, error) {
	members, err := jsonobj.Members(body)
	if err != nil {
		return nil, records.ISL{}, fmt.Errorf("payload: %w", err)
	}
	ex, err := extract.Object(members)
	if err != nil {
		return nil, records.ISL{}, err
	}
	isl, err := m.measureRequest(ex, meta)
	if err != nil {
		return nil, records.ISL{}, err
	}
	isl.OSL = meta.osl
	isl.Chained = meta.chained
	if _, ok := obj.Get("isl"); !ok && data != nil {
		// Copy the line once (or not at all) instead of serialising every
		// member again.
		out, err := appendISL(data, isl, own)
		return out, isl, err
	}
	if obj, err = obj.Set("isl", isl); err != nil {
		return nil, records.ISL{}, err
	}
	return obj.Marshal(), isl, nil
}

// sendRecord measures a records.Request written by send; a live record
// also brings its outcome for the performance summary.
func (m *Measurer) sendRecord(obj jsonobj.Object, data []byte, own bool) ([]byte, report.Request, error) {
	// The request's fields without its payload (measured in place) and its
	// result (of which only the timings and usage matter): those are most
	// of the line.
	head := make(jsonobj.Object, 0, len(obj))
	for _, mem := range obj {
		if mem.Key != "payload" && mem.Key != "result" {
			head = append(head, mem)
		}
	}
	var req report.Request
	for _, f := range []string{"target_isl", "expected_isl"} {
		if raw, ok := obj.Get(f); ok {
			if _, err := count(raw, f); err != nil {
				return nil, req, err
			}
		}
	}
	var rec struct {
		records.Request
		// Written by send's warmup and scheduling (not in every version).
		Warmup        bool   `json:"warmup"`
		ScheduleLagNs *int64 `json:"schedule_lag_ns"`
	}
	if err := decodeHead(head.Marshal(), &rec); err != nil {
		return nil, req, err
	}
	if rec.SchemaVersion != records.SchemaVersion {
		return nil, req, fmt.Errorf(`send record: field "schema_version": unknown schema version %d (this measure reads version %d)`, rec.SchemaVersion, records.SchemaVersion)
	}
	req.ModelMismatch = m.checkPin(rec.ComposedFor)
	meta := requestMeta{conversationID: rec.ConversationID, marker: rec.Marker, cacheBust: rec.CacheBust, maxTokens: rec.MaxTokens, sizedFor: rec.Server}
	target, turn := rec.TargetISL, rec.Turn
	meta.target, meta.turn, meta.expected = &target, &turn, rec.ExpectedISL
	meta.expectedCached = rec.ExpectedCachedTokens
	req.Warmup = rec.Warmup
	req.BenchmarkID, req.ConversationIndex = rec.BenchmarkID, rec.ConversationIndex
	req.Stage = rec.Stage
	// A result's unreadable usage is reported, but the request was sent:
	// its timings still count, and its ISL is still measured.
	var usageErr error
	if result, ok := obj.Get("result"); ok && !isNull(result) {
		var live *report.Live
		live, meta.server, meta.cached, usageErr = readResult(result)
		if live != nil && !rec.DryRun {
			if live.ScheduleLagNs == nil {
				live.ScheduleLagNs = rec.ScheduleLagNs
			}
			if live.OK && !live.Usage.Counts() {
				m.countOutput(live, result)
			}
			asked := ""
			if rec.OutputLength != nil {
				asked = rec.OutputLength.Mode
			}
			meta.osl = m.oslOf(rec.MaxTokens, asked, result)
			req.Live = live
		}
	}
	body, _ := obj.Get("payload")
	if ch := rec.Chained; ch != nil {
		// A chained Responses turn: the server prefills the conversation
		// it reconstructs, not the payload's new turn alone.
		body = ch.Reconstructed
		meta.chained = true
	}
	if isNull(body) {
		// send --no-payload: the performance figures need no payload; the
		// ISL cannot be recounted, and the record says so.
		req.Unmeasured, req.NoPayload = true, true
		req.ISL = records.ISL{Error: NoPayloadError, Server: meta.server, ServerCached: meta.cached,
			Target: meta.target, Expected: meta.expected, ExpectedCached: meta.expectedCached,
			ConversationID: meta.conversationID, TurnIndex: meta.turn, OSL: meta.osl, Chained: meta.chained}
		out, err := appendISL(data, req.ISL, own)
		if err == nil {
			err = usageErr
		}
		return out, req, err
	}
	out, isl, err := m.withISL(obj, data, body, meta, own)
	req.ISL = isl
	if err != nil {
		req.Unmeasured = true
		return nil, req, err
	}
	if usageErr != nil {
		// Counted, but the server's figures could not be read: the record
		// keeps its counts and says why it has no server count.
		req.ISL.Error = usageErr.Error()
		out, err = withISLMember(obj, data, req.ISL, own)
		if err == nil {
			err = usageErr
		}
	}
	return out, req, err
}

// NoPayloadError is the isl.error of a record sent with send --no-payload.
const NoPayloadError = "no payload (send --no-payload): the ISL could not be recounted"

// readResult reads a send record's result: its timings and usage for the
// performance section, and the server's prompt and cached counts. An
// unreadable usage leaves those counts out (nil) and is returned as err;
// live is nil only when the result's timings themselves are unreadable.
func readResult(result []byte) (live *report.Live, server, cached *int, err error) {
	var r struct {
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil, nil, nil, fieldErrorf("result", "must be an object")
	}
	var usageErr error
	if server, usageErr = promptTokens(r.Usage); usageErr == nil {
		cached, usageErr = cachedTokens(r.Usage)
	}
	if usageErr != nil {
		server, cached = nil, nil
		usageErr = prefixField("result", usageErr)
	}
	// report.Live reads the result's timing members only; the texts are
	// skipped.
	live = new(report.Live)
	if derr := decodeHead(result, live); derr != nil {
		// Read the timings again without the usage: a usage of the wrong
		// shape is the server's fault, not the request's.
		members, perr := jsonobj.Members(result)
		var noUsage jsonobj.Object
		for _, mem := range members {
			if mem.Key != "usage" {
				noUsage = append(noUsage, mem)
			}
		}
		live = new(report.Live)
		if perr != nil || decodeHead(noUsage.Marshal(), live) != nil {
			return nil, nil, nil, prefixField("result", derr)
		}
		if usageErr == nil {
			usageErr = prefixField("result", derr)
		}
		return live, nil, nil, usageErr
	}
	if usageErr != nil && live.Usage != nil {
		live.Usage.PromptTokens = nil // unreadable: no count, not a wrong one
	}
	return live, server, cached, usageErr
}

// withISLMember writes obj (whose text is data, or nil) with "isl".
func withISLMember(obj jsonobj.Object, data []byte, isl records.ISL, own bool) ([]byte, error) {
	if _, ok := obj.Get("isl"); !ok && data != nil {
		return appendISL(data, isl, own)
	}
	obj, err := obj.Set("isl", isl)
	if err != nil {
		return nil, err
	}
	return obj.Marshal(), nil
}

// chatBody measures a bare OpenAI chat-completions body (data is obj's
// own text, so it is not serialised again).
func (m *Measurer) chatBody(obj jsonobj.Object, data []byte, own bool) ([]byte, records.ISL, error) {
	if _, ok := obj.Get("isl"); ok {
		return m.withISL(obj, data, data, requestMeta{}, own)
	}
	ex, err := extract.Object(obj)
	if err != nil {
		return nil, records.ISL{}, err
	}
	isl, err := m.measureRequest(ex, requestMeta{})
	if err != nil {
		return nil, records.ISL{}, err
	}
	out, err := appendISL(data, isl, own)
	return out, isl, err
}

// appendISL adds the "isl" member to a record's text data; own says that
// the caller gave data up (Line), so that it is written over in place.
func appendISL(data []byte, isl any, own bool) ([]byte, error) {
	if own {
		return jsonobj.AppendMemberInPlace(data, "isl", isl)
	}
	return jsonobj.AppendMember(data, "isl", isl)
}

func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// aiperfRaw measures one record of AIPerf's profile_export_raw.jsonl: the
// request body is "payload"; the server's count is the last non-empty
// usage among the raw "responses".
func (m *Measurer) aiperfRaw(obj jsonobj.Object, data []byte, own bool) ([]byte, records.ISL, error) {
	body, _ := obj.Get("payload")
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return nil, records.ISL{}, fmt.Errorf(`field "payload": not a JSON object`)
	}
	var meta requestMeta
	if raw, ok := obj.Get("metadata"); ok {
		var md struct {
			ConversationID string `json:"conversation_id"`
			TurnIndex      *int   `json:"turn_index"`
		}
		if json.Unmarshal(raw, &md) == nil {
			meta.conversationID, meta.turn = md.ConversationID, md.TurnIndex
		}
	}
	if raw, ok := obj.Get("cache_bust_marker"); ok {
		_ = json.Unmarshal(raw, &meta.marker)
	}
	if raw, ok := obj.Get("responses"); ok {
		server, err := usageFromResponses(raw)
		if err != nil {
			return nil, records.ISL{}, prefixField("responses", err)
		}
		meta.server = server
		status, _ := obj.Get("status")
		meta.osl = m.aiperfOSL(body, raw, status)
	}
	return m.withISL(obj, data, body, meta, own)
}

// usageFromResponses finds usage.prompt_tokens (input_tokens, also under
// a Responses event's "response") in AIPerf's raw responses:
// a list of SSE chunks or bodies, as strings or as {"text": ...} objects;
// the last usage that carries prompt_tokens wins. A usage without it
// (only completion tokens) is not a count of 0.
func usageFromResponses(raw json.RawMessage) (*int, error) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, nil
	}
	var found *int
	for i, it := range items {
		var text string
		if json.Unmarshal(it, &text) != nil {
			var obj struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(it, &obj) == nil && obj.Text != nil {
				text = *obj.Text
			} else {
				text = string(it) // a JSON body stored as an object
			}
		}
		for _, line := range bytes.Split([]byte(text), []byte("\n")) {
			line = bytes.TrimSpace(line)
			line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
			if len(line) == 0 || line[0] != '{' {
				continue
			}
			var chunk struct {
				Usage json.RawMessage `json:"usage"`
				// A Responses event (response.completed) carries the
				// whole response, usage included.
				Response struct {
					Usage json.RawMessage `json:"usage"`
				} `json:"response"`
			}
			if json.Unmarshal(line, &chunk) != nil {
				continue
			}
			if isNull(chunk.Usage) {
				chunk.Usage = chunk.Response.Usage
			}
			n, err := promptTokens(chunk.Usage)
			if err != nil {
				return nil, prefixField(strconv.Itoa(i), err)
			}
			var all records.Usage // a usage of zeros counts nothing
			if n != nil && (*n != 0 || json.Unmarshal(chunk.Usage, &all) == nil && all.Counts()) {
				found = n
			}
		}
	}
	return found, nil
}

// inputsJSON expands AIPerf's inputs.json, {"data": [{"session_id",
// "payloads": [...]}]}, into one record per payload.
func (m *Measurer) inputsJSON(obj jsonobj.Object) (Result, error) {
	raw, _ := obj.Get("data")
	var sessions []struct {
		SessionID json.RawMessage   `json:"session_id"`
		Payloads  []json.RawMessage `json:"payloads"`
	}
	if err := json.Unmarshal(raw, &sessions); err != nil {
		return Result{}, &BadRecordError{Kind: FailBadRecord, Err: fmt.Errorf(`inputs.json: "data" must be an array of {"session_id", "payloads"}`)}
	}
	var out Result
	var errs []string
	for i, s := range sessions {
		for j, body := range s.Payloads {
			rec := jsonobj.Object{}
			if len(s.SessionID) > 0 {
				rec, _ = rec.Set("session_id", s.SessionID)
			}
			rec, _ = rec.Set("turn", j)
			rec, _ = rec.Set("payload", body)
			var sid string
			_ = json.Unmarshal(s.SessionID, &sid)
			turn := j
			line, isl, err := m.withISL(rec, nil, body, requestMeta{conversationID: sid, turn: &turn}, false)
			if err != nil {
				// The other payloads are still measured; the run fails.
				errs = append(errs, fmt.Sprintf("data[%d].payloads[%d]: %v", i, j, err))
				continue
			}
			out.Lines = append(out.Lines, line)
			out.Requests = append(out.Requests, report.Request{ISL: isl})
		}
	}
	if len(errs) > 0 {
		return out, &BadRecordError{Kind: FailBadRecord, Err: fmt.Errorf("inputs.json: %d payload(s) failed: %s", len(errs), strings.Join(errs, "; "))}
	}
	return out, nil
}

// countOutput counts a succeeded request's output tokens when the server
// sent no usage: the streamed text (output_text, then reasoning_text) with
// measure's tokenizer, so the output throughput is not 0. The summary says
// how many requests were counted so (Performance.OutputCounted).
func (m *Measurer) countOutput(live *report.Live, result []byte) {
	var r struct {
		OutputText string `json:"output_text"`
		Reasoning  string `json:"reasoning_text"`
	}
	if json.Unmarshal(result, &r) != nil || r.OutputText == "" && r.Reasoning == "" {
		return
	}
	n := m.opts.Tokenizer.Count(r.OutputText) + m.opts.Tokenizer.Count(r.Reasoning)
	live.Usage = &records.Usage{CompletionTokens: n}
	live.OutputCounted = true
}
