// Package measure counts the tokens of JSONL records: bare text, chat
// messages rendered through the model's chat template, and request
// payloads (send records, OpenAI bodies, AIPerf exports). Each output
// record is the input record, members in their original order, with the
// counts added.
package measure

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// Options says what to count and what to add to each record.
type Options struct {
	Tokenizer *tokenizer.Tokenizer
	// Template is the model's chat template; nil when it has none, in
	// which case message records are counted bare, as AIPerf does.
	Template *chat.Template
	// ApplyChatTemplate counts message records as the server sees them:
	// rendered with add_generation_prompt, then encoded.
	ApplyChatTemplate bool
	// IDs adds "ids" to text records; Rendered adds "rendered" to message
	// records counted through the template.
	IDs, Rendered bool
	// Now pins strftime_now; zero means the clock.
	Now time.Time
	// Bare adds AIPerf's bare count to requests counted through the
	// template too (it is always there when it is the reported count).
	Bare bool
	// NoTools reproduces AIPerf: request tools are not passed to the
	// template; their texts are counted bare and added instead.
	NoTools bool
	// Server is the server profile whose preprocessing templated counts
	// follow (serverprofile.Default when empty).
	Server serverprofile.Profile
	// CompareServer, when set, also counts each templated request under
	// that profile and explains the difference (isl.vs_profile).
	CompareServer serverprofile.Profile
	// Model is the model Tokenizer and Template come from: a send record's
	// composed_for is checked against it (model.Differs), and a record
	// composed for another model is warned about. nil checks nothing.
	Model *model.Model
	// Vision is the model's image processing (serverprofile.LoadVision);
	// nil for a text-only model, whose server refuses images.
	Vision *serverprofile.Vision
}

// Measurer processes records; it is safe for concurrent use.
type Measurer struct {
	opts Options
	// probe holds the chat-template and marker constants compose would
	// have used, computed once, for explaining gaps.
	probeOnce sync.Once
	probe     probeConstants
	// templateFailures counts requests counted bare although the template
	// was asked for; firstTemplateError is the first one's reason.
	templateFailures   atomic.Int64
	firstTemplateError atomic.Pointer[string]
	// markerHits counts first requests whose server had their cache-bust
	// marker cached (report.MarkerHit); firstMarkerHit describes one.
	markerHits     atomic.Int64
	firstMarkerHit atomic.Pointer[string]
	// pins holds, per composed_for seen, how Model differs from it ("" for
	// not at all); pinMismatches counts the records composed for another
	// model, firstPinMismatch says how the first one differs.
	pinMu            sync.Mutex
	pins             map[records.ModelPin]string
	pinMismatches    atomic.Int64
	firstPinMismatch atomic.Pointer[string]
	// sizedOther counts the records sized for another server profile
	// than the one counted with, by that profile.
	sizedMu    sync.Mutex
	sizedOther map[string]int
}

// checkPin says how the model measure counts with differs from pin, the
// model a record was composed for ("" when it does not, or either is
// unknown), and counts the record when it does.
func (m *Measurer) checkPin(pin *records.ModelPin) string {
	if pin == nil || m.opts.Model == nil {
		return ""
	}
	m.pinMu.Lock()
	why, ok := m.pins[*pin]
	if !ok {
		var err error
		if why, err = m.opts.Model.Differs(*pin, m.opts.ApplyChatTemplate); err != nil {
			why = "cannot be compared: " + err.Error()
		}
		if m.pins == nil {
			m.pins = map[records.ModelPin]string{}
		}
		m.pins[*pin] = why
	}
	m.pinMu.Unlock()
	if why != "" {
		m.pinMismatches.Add(1)
		m.firstPinMismatch.CompareAndSwap(nil, &why)
	}
	return why
}

// markerHit records a first request whose cached tokens reach the end of
// its marker.
func (m *Measurer) markerHit(conversation string, cached, end int) {
	m.markerHits.Add(1)
	what := fmt.Sprintf("%s: %d cached, the marker ends at token %d", conversation, cached, end)
	m.firstMarkerHit.CompareAndSwap(nil, &what)
}

// sizedForOther records one request sized for profile p, not ours.
func (m *Measurer) sizedForOther(p string) {
	m.sizedMu.Lock()
	defer m.sizedMu.Unlock()
	if m.sizedOther == nil {
		m.sizedOther = map[string]int{}
	}
	m.sizedOther[p]++
}

// noTemplate is the template error of a model without a chat template.
const noTemplate = "the model has no chat template (give one with --chat-template)"

// templateFailed records one request counted bare for reason.
func (m *Measurer) templateFailed(reason string) {
	m.templateFailures.Add(1)
	m.firstTemplateError.CompareAndSwap(nil, &reason)
}

// Warnings returns what the run should tell on stderr once, at its end:
// how many requests were counted bare because the chat template failed,
// how many first requests hit their cache-bust marker in a cache, and
// how many were sized for another server profile than the one they are
// counted with (send's "server": compose --server).
func (m *Measurer) Warnings() []string {
	var out []string
	if n := m.templateFailures.Load(); n > 0 {
		out = append(out, fmt.Sprintf("warning: %d request(s) counted bare instead of through the chat template: %s", n, *m.firstTemplateError.Load()))
	}
	if n := m.pinMismatches.Load(); n > 0 {
		out = append(out, "warning: "+report.ModelMismatchWarning(uint64(n), *m.firstPinMismatch.Load()))
	}
	if n := m.markerHits.Load(); n > 0 {
		out = append(out, fmt.Sprintf("warning: %s", report.MarkerHitWarning(uint64(n), *m.firstMarkerHit.Load())))
	}
	m.sizedMu.Lock()
	defer m.sizedMu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(m.sizedOther)) {
		out = append(out, fmt.Sprintf("warning: %d request(s) were sized for --server %s and are counted as %s (their isl says sized_for): their gaps to the target include the two servers' difference; measure them with --server %s", m.sizedOther[p], p, m.profile(), p))
	}
	return out
}

// New returns a Measurer.
func New(opts Options) *Measurer { return &Measurer{opts: opts} }

// ErrUnknownShape is returned for a JSON object measure does not recognise.
var ErrUnknownShape = errors.New(`unknown record shape: expected a send record, an OpenAI chat, completions or Responses body ("model" and "messages", "prompt" or "input"), an AIPerf raw export record ("payload"), AIPerf inputs.json ("data"), or a "messages" or "text" record`)

// Record measures one JSONL record and returns the output lines: one per
// record, or one per payload for an AIPerf inputs.json document. An error
// means the record could not be measured at all (not JSON, unknown shape,
// no messages); a chat template failure is not an error: the record is
// counted bare and says why. data is not changed.
func (m *Measurer) Record(data []byte) (res Result, err error) {
	return m.record(data, false)
}

// record is Record; own says that the caller gave data up, so that the
// output may be written over its end (see jsonobj.AppendMemberInPlace).
func (m *Measurer) record(data []byte, own bool) (res Result, err error) {
	obj, perr := jsonobj.Parse(data)
	err = perr
	if err != nil {
		return Result{}, &BadRecordError{Kind: FailBadJSON, Err: err}
	}
	var out []byte
	var req report.Request
	switch {
	case isKind(obj, records.KindRequest):
		out, req, err = m.sendRecord(obj, data, own)
		if key, ok := recordKey(obj); ok {
			defer func() { res.key, res.keyed = key, true }()
		}
	case isKind(obj, records.KindRun):
		// send's run configuration: passed through, no request.
		var run records.Run
		if err := decodeHead(data, &run); err != nil {
			return Result{}, &BadRecordError{Kind: FailBadRecord, Err: fmt.Errorf("run record: %w", err)}
		}
		return Result{Lines: [][]byte{data}, Run: &run}, nil
	case isKind(obj, records.KindMetrics):
		// send --scrape-metrics' sample of the server's metrics: passed
		// through, and the summary's second witness.
		var mt records.Metrics
		// One it cannot read is written back as it came, and said.
		if err := decodeHead(data, &mt); err != nil {
			return Result{Lines: [][]byte{data}}, &BadRecordError{Kind: FailBadRecord, Err: fmt.Errorf("metrics record: %w", err)}
		}
		if mt.SchemaVersion != records.SchemaVersion {
			return Result{Lines: [][]byte{data}}, &BadRecordError{Kind: FailBadRecord, Err: fmt.Errorf(`metrics record: field "schema_version": unknown schema version %d (this measure reads version %d)`, mt.SchemaVersion, records.SchemaVersion)}
		}
		return Result{Lines: [][]byte{data}, Metrics: &mt}, nil
	case isKind(obj, records.KindConversation):
		return Result{}, &BadRecordError{Kind: FailUnknownShape, Err: errors.New("this is compose's output (a conversation), not requests: run it through `send --dry-run` first and measure what that writes")}
	case isKind(obj, records.KindProbe):
		return Result{}, &BadRecordError{Kind: FailUnknownShape, Err: errors.New("this is probe's output: pipe it into compose, then `send --dry-run`, and measure what that writes")}
	case obj.Has("payload"):
		out, req.ISL, err = m.aiperfRaw(obj, data, own)
	case obj.Has("data") && !obj.Has("messages"):
		return m.inputsJSON(obj)
	case (obj.Has("messages") || obj.Has("prompt") || obj.Has("input")) && obj.Has("model"):
		// A chat, completions or Responses body (extract tells which).
		out, req.ISL, err = m.chatBody(obj, data, own)
	case obj.Has("messages"):
		out, err = m.messages(obj)
		return Result{Lines: lines(out)}, classify(err)
	case obj.Has("text"):
		out, err = m.text(obj)
		return Result{Lines: lines(out)}, classify(err)
	case obj.Has("model"):
		return Result{}, &BadRecordError{Kind: FailNoMessages, Err: extract.ErrNoMessages}
	default:
		return Result{}, &BadRecordError{Kind: FailUnknownShape, Err: ErrUnknownShape}
	}
	if err != nil && out == nil {
		// A request measure could not count keeps its place in the
		// output, with the reason (isl.error): the output lines up with
		// the input.
		req.Unmeasured = true
		out, _ = withISLMember(obj, data, records.ISL{Error: err.Error()}, own)
	}
	// Sent all the same, an unmeasured request's outcome still belongs to
	// the performance section (or to the warmup count).
	return Result{Lines: lines(out), Requests: []report.Request{req}}, classify(err)
}

// Line measures one input line: Record, after checking that the line is
// UTF-8 (a bad line fails as FailBadUTF8). The caller gives line.Data up:
// the output is written over its end where its capacity allows (a line's
// images are not copied for the isl member).
func (m *Measurer) Line(line jsonl.Line) (res Result, err error) {
	defer func() {
		// A tokenizer regex that backtracks past its timeout fails this
		// line only; the other lines are still measured.
		if p := recover(); p != nil {
			te, ok := p.(*regex.TimeoutError)
			if !ok {
				panic(p)
			}
			res, err = Result{}, &jsonl.LineError{File: line.File, Line: line.Num, Err: &BadRecordError{Kind: FailBadRecord, Err: te}}
		}
	}()
	if err := line.CheckUTF8(); err != nil {
		return Result{}, &BadRecordError{Kind: FailBadUTF8, Err: err}
	}
	// The digest is taken first: the output may be written over the line.
	digest := lineDigest(line.Data)
	res, err = m.record(line.Data, true)
	if res.keyed {
		res.line = jsonl.Line{File: line.File, Num: line.Num}
		res.digest = digest
	}
	return res, withLine(line, err)
}

// FailureKind is the summary's name for why a line failed.
func FailureKind(err error) string {
	var bad *BadRecordError
	switch {
	case errors.As(err, &bad):
		return bad.Kind
	case errors.Is(err, jsonl.ErrLineTooLong):
		return FailTooLong
	default:
		return FailBadRecord
	}
}

// Result is what Record made of one input record.
type Result struct {
	// Lines are the output records (one; several for inputs.json).
	Lines [][]byte
	// Requests holds each request measured, for the summary: its counts
	// and, for a live send record, its outcome.
	Requests []report.Request

	// Run is send's run configuration (an islkit.run record), for the
	// summary.
	Run *records.Run
	// Metrics is a sample of the server's metrics (an islkit.metrics
	// record), for the summary's second witness.
	Metrics *records.Metrics

	// A send record's key, and where and what the line is, for Dedup.
	key    RecordKey
	keyed  bool
	line   jsonl.Line // File and Num only
	digest uint64
}

func lines(out []byte) [][]byte {
	if out == nil {
		return nil
	}
	return [][]byte{out}
}

// Failure kinds, as the summary counts them.
const (
	FailBadJSON      = "bad_json"
	FailUnknownShape = "unknown_shape"
	FailNoMessages   = "no_messages"
	FailBadRecord    = "bad_record"
	FailBadUTF8      = "bad_utf8"
	FailTooLong      = "line_too_long"
	// FailRefused: the server profile's server would refuse the request
	// (serverprofile.RefusalError names the rule).
	FailRefused = "refused"
)

// BadRecordError is a record measure could not measure, with its kind.
type BadRecordError struct {
	Kind string
	Err  error
}

func (e *BadRecordError) Error() string { return e.Err.Error() }
func (e *BadRecordError) Unwrap() error { return e.Err }

func classify(err error) error {
	var bad *BadRecordError
	switch {
	case err == nil || errors.As(err, &bad):
		return err
	case serverprofile.IsRefusal(err):
		return &BadRecordError{Kind: FailRefused, Err: err}
	case errors.Is(err, extract.ErrNoMessages):
		return &BadRecordError{Kind: FailNoMessages, Err: err}
	default:
		return &BadRecordError{Kind: FailBadRecord, Err: err}
	}
}

func isKind(obj jsonobj.Object, kind string) bool {
	raw, ok := obj.Get("kind")
	if !ok {
		return false
	}
	k, err := jsonobj.String(raw)
	return err == nil && k == kind
}

func (m *Measurer) text(obj jsonobj.Object) ([]byte, error) {
	raw, _ := obj.Get("text")
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf(`field "text": must be a string`)
	}
	var err error
	if m.opts.IDs {
		ids := m.opts.Tokenizer.Encode(text)
		if ids == nil {
			ids = []int{} // JSON consumers expect [], not null
		}
		if obj, err = obj.Set("tokens", len(ids)); err != nil {
			return nil, err
		}
		if obj, err = obj.Set("ids", ids); err != nil {
			return nil, err
		}
	} else if obj, err = obj.Set("tokens", m.opts.Tokenizer.Count(text)); err != nil {
		return nil, err
	}
	return obj.Marshal(), nil
}

// messages measures a "messages" record (a chat request without a
// model): its add_generation_prompt (default true), continue_final_message,
// tools and chat_template_kwargs are read as a chat body's are, through the
// server profile.
func (m *Measurer) messages(obj jsonobj.Object) ([]byte, error) {
	// The texts are read the way request payloads are (one rule for
	// "the text of a request"); the bare count needs them, and reading
	// them also rejects messages of the wrong shape.
	ex, err := extract.Object(obj)
	if err != nil {
		return nil, err
	}
	counted := "bare"
	tokens := 0
	var renderErr error
	var rendered []byte
	if m.opts.ApplyChatTemplate && m.opts.Template != nil {
		pr, err := m.serverPrompt(ex, nil)
		switch {
		case serverprofile.IsTemplateError(err):
			renderErr = err
			m.templateFailed("chat template: " + renderErr.Error())
		case err != nil:
			return nil, err
		default:
			rendered, tokens, counted = pr.Text, pr.Count(m.opts.Tokenizer), "templated"
		}
	} else if m.opts.ApplyChatTemplate {
		renderErr = errors.New(noTemplate)
		m.templateFailed(noTemplate)
	}
	if counted == "bare" {
		tokens = m.opts.Tokenizer.Count(strings.Join(ex.Texts, " "))
	}
	if obj, err = obj.Set("tokens", tokens); err != nil {
		return nil, err
	}
	if obj, err = obj.Set("counted", counted); err != nil {
		return nil, err
	}
	if m.opts.Rendered && counted == "templated" {
		if obj, err = obj.Set("rendered", string(rendered)); err != nil {
			return nil, err
		}
	}
	if renderErr != nil {
		if obj, err = obj.Set("error", "chat template: "+renderErr.Error()+"; counted bare"); err != nil {
			return nil, err
		}
	}
	return obj.Marshal(), nil
}
