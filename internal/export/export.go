// Package export writes what measure read as tables for notebooks
// (measure --export FILE.csv|FILE.parquet): one flat row per request, and
// beside it the gaps between output chunks, the per-stage performance and
// the server's metric samples, each a table of its own in the same format
// (TablePaths). The columns are typed (integers, floats, booleans,
// strings; nullable where a record may lack the value) and documented in
// schemas/export.md; the figures of measure's --summary-json can be
// recomputed from them (TestExportRecomputesTheSummary).
package export

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/outfile"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
)

// Format is a table file format.
type Format string

// The formats, told by the file's extension.
const (
	CSV     Format = "csv"
	Parquet Format = "parquet"
)

// FormatOf tells the format of path by its extension.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return CSV, nil
	case ".parquet":
		return Parquet, nil
	}
	return "", fmt.Errorf("%s: the file must end in .csv or .parquet (the format is told by the extension)", path)
}

// The tables, in the order TablePaths names them.
const (
	TableRequests = "requests"
	TableITL      = "itl"
	TableStages   = "stages"
	TableMetrics  = "metrics"
)

// Tables lists the table names, requests first.
var Tables = []string{TableRequests, TableITL, TableStages, TableMetrics}

// TablePaths names the file of each table for --export path: the requests
// at path itself, the others with the table's name before the extension
// (run.csv: run.itl.csv, run.stages.csv, run.metrics.csv).
func TablePaths(path string) map[string]string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	out := map[string]string{TableRequests: path}
	for _, t := range Tables[1:] {
		out[t] = stem + "." + t + ext
	}
	return out
}

// Exporter collects the rows of a run and writes them at its end. A nil
// Exporter (no --export) does nothing.
type Exporter struct {
	format Format
	opts   *report.Options
	files  map[string]*outfile.File
	rows   []RequestRow
	// gaps are every request's gaps between output chunks, one after the
	// other; gapRows says whose (the itl table, made as it is written).
	gaps    []int64
	gapRows []gapSpan
	metrics []MetricRow
	staged  []stagedRequest
}

// New checks flag's path and its tables' paths (outfile.Set.Add, before
// any work) and returns the Exporter; nil, nil when path is empty. opts
// are the summary's options, read when the tables are written: the
// per-stage figures follow them (SLO, client limits).
func New(flag, path string, outs *outfile.Set, opts *report.Options) (*Exporter, error) {
	if path == "" {
		return nil, nil
	}
	format, err := FormatOf(path)
	if err != nil {
		return nil, fmt.Errorf("%s %w", flag, err)
	}
	e := &Exporter{format: format, opts: opts, files: map[string]*outfile.File{}}
	for t, p := range TablePaths(path) {
		name := flag
		if t != TableRequests {
			name = flag + " (" + t + " table)"
		}
		if e.files[t], err = outs.Add(name, p); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Pending is what the tables take from one input record's lines, read
// by Prepare where the record was measured (measure's workers), so that
// Add, on the one goroutine that writes the output, only appends.
type Pending struct {
	lines   []sendLine // one per request, paired as Add pairs them
	metrics []records.Metrics
}

// Prepare reads what the tables need from the output lines of one input
// record and the requests measured in them (paired one to one when there
// are as many, as measure writes them): each request's send fields, or
// the samples of a metrics record. Safe for concurrent use; nil without
// --export.
func (e *Exporter) Prepare(lines [][]byte, reqs []report.Request) *Pending {
	if e == nil {
		return nil
	}
	p := &Pending{}
	if len(reqs) == 0 {
		for _, line := range lines {
			if m, ok := metricsOf(line); ok {
				p.metrics = append(p.metrics, m)
			}
		}
		return p
	}
	p.lines = make([]sendLine, len(reqs))
	if len(lines) == len(reqs) {
		for i, line := range lines {
			if json.Unmarshal(line, &p.lines[i]) != nil {
				p.lines[i] = sendLine{} // measure said why; its fields stay null
			}
		}
	}
	return p
}

// Add adds the rows of one input record: its requests (those the summary
// counts) with what Prepare read from its lines. Called in input order.
func (e *Exporter) Add(p *Pending, reqs []report.Request) {
	if e == nil || p == nil {
		return
	}
	for _, m := range p.metrics {
		e.addMetrics(m)
	}
	for i, r := range reqs {
		var rec sendLine
		if i < len(p.lines) {
			rec = p.lines[i]
		}
		e.addRequest(rec, r)
	}
}

// sendLine is what a request row reads from the record itself, beside
// what measure handed the summary (report.Request): send's fields. A
// record whose fields cannot be read (measure said why) leaves them null.
type sendLine struct {
	Kind              string         `json:"kind"`
	BenchmarkID       *string        `json:"benchmark_id"`
	Endpoint          string         `json:"endpoint"`
	Server            string         `json:"server"`
	ConversationIndex *int           `json:"conversation_index"`
	Pass              *int           `json:"pass"`
	TargetISL         *int           `json:"target_isl"`
	ExpectedISL       *int           `json:"expected_isl"`
	MaxTokens         *int           `json:"max_tokens"`
	DryRun            bool           `json:"dry_run"`
	Stage             *records.Stage `json:"stage"`
	Result            *sendResult    `json:"result"`
}

// sendResult is the part of a send record's result the row takes from
// the record (the timings and usage come through report.Live).
type sendResult struct {
	ScheduledNs  *int64                `json:"scheduled_ns"`
	Status       *int                  `json:"status"`
	Chunks       *int                  `json:"chunks"`
	FinishReason string                `json:"finish_reason"`
	Error        *records.RequestError `json:"error"`
}

// gapSpan is one request's gaps in Exporter.gaps.
type gapSpan struct {
	row    int64
	off, n int
}

// itlRows hands the itl table to emit in batches.
func (e *Exporter) itlRows(emit func([]ITLRow) error) error {
	const batch = 1 << 14
	buf := make([]ITLRow, 0, batch)
	for _, sp := range e.gapRows {
		for i, g := range e.gaps[sp.off : sp.off+sp.n] {
			if len(buf) == batch {
				if err := emit(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			buf = append(buf, ITLRow{Row: sp.row, Index: int64(i), ITLNs: g})
		}
	}
	return emit(buf)
}

// stagedRequest is a request with its stage, for the per-stage table.
type stagedRequest struct {
	stage *records.Stage
	req   report.Request
}

func (e *Exporter) addRequest(rec sendLine, r report.Request) {
	row := RequestRow{Row: int64(len(e.rows)), Warmup: r.Warmup, Measured: !r.Unmeasured, NoPayload: r.NoPayload, ModelMismatch: str(r.ModelMismatch)}
	row.RecordKind = str(rec.Kind)
	row.BenchmarkID = rec.BenchmarkID
	row.Server = str(rec.Server)
	row.ConversationIndex = i64(rec.ConversationIndex)
	row.Pass = i64(rec.Pass)
	row.MaxTokens = i64(rec.MaxTokens)
	row.DryRun = rec.DryRun
	if s := cmp.Or(r.Stage, rec.Stage); s != nil {
		row.StageIndex = ptr(int64(s.Index))
		if s.Concurrency != 0 {
			row.StageConcurrency = ptr(int64(s.Concurrency))
		}
		if s.Rate != 0 {
			row.StageRate = ptr(s.Rate)
		}
	}
	isl := r.ISL
	row.ConversationID = str(isl.ConversationID)
	row.Turn = i64(isl.TurnIndex)
	row.Endpoint = str(string(isl.Endpoint))
	if row.Endpoint == nil {
		row.Endpoint = str(rec.Endpoint)
	}
	row.Profile = str(isl.Profile)
	row.TargetISL = i64(isl.Target)
	if row.TargetISL == nil {
		row.TargetISL = i64(rec.TargetISL)
	}
	row.ExpectedISL = i64(isl.Expected)
	if row.ExpectedISL == nil {
		row.ExpectedISL = i64(rec.ExpectedISL)
	}
	row.ISLTemplated, row.ISLBare, row.ServerISL = i64(isl.Templated), i64(isl.Bare), i64(isl.Server)
	row.ISLError, row.TemplateError = str(isl.Error), str(isl.TemplateError)
	if !r.Unmeasured {
		// The count the summary's ISL tables read, and their errors.
		n, which := report.Reported(isl)
		row.ISL, row.ISLCounted = ptr(int64(n)), &which
		if isl.Target != nil {
			row.ISLVsTarget = ptr(int64(n) - int64(*isl.Target))
		}
		if isl.Expected != nil {
			row.ISLVsExpected = ptr(int64(n) - int64(*isl.Expected))
		}
		if isl.Server != nil {
			row.ISLVsServer = ptr(int64(*isl.Server) - int64(n))
		}
	}
	if m := isl.Media; m != nil {
		row.Images = ptr(int64(m.Images))
	}
	if it := isl.ImageTokens; it != nil {
		row.ImageTokens = ptr(int64(it.Total))
	}
	row.ExpectedCachedTokens, row.CachedTokens = i64(isl.ExpectedCached), i64(isl.ServerCached)
	if o := isl.OSL; o != nil {
		row.OSLCause = str(o.Cause)
	}
	if l := r.Live; l != nil {
		e.live(&row, l, rec.Result)
	}
	e.rows = append(e.rows, row)
	stage := r.Stage // measure's reading of the record's stage
	if stage == nil {
		stage = rec.Stage
	}
	e.staged = append(e.staged, stagedRequest{stage: stage, req: r})
}

// live fills the row's outcome of a live request, and its gaps.
func (e *Exporter) live(row *RequestRow, l *report.Live, res *sendResult) {
	lat := max(l.LatencyNs, 0)
	row.StartNs, row.LatencyNs = ptr(l.StartNs), ptr(l.LatencyNs)
	row.EndNs = ptr(satAdd(l.StartNs, lat))
	row.ScheduleLagNs, row.QueueNs, row.SizingNs, row.ClientCPU = l.ScheduleLagNs, l.QueueNs, l.SizingNs, l.ClientCPU
	row.TTFTNs = l.TTFTNs
	row.OK, row.Stream, row.Retried = ptr(l.OK), ptr(l.Stream), l.Retried
	if u := l.Usage; u != nil {
		row.PromptTokens = i64(u.PromptTokens)
		row.OutputTokens = ptr(int64(u.CompletionTokens))
		row.ReasoningTokens = i64(u.ReasoningTokens)
		row.OutputTokensCounted = l.OutputCounted
		// The summary's tpot: a streamed request with a TTFT and more
		// than one output token.
		if l.OK && l.Stream && l.TTFTNs != nil && u.CompletionTokens > 1 {
			row.TPOTNs = ptr((float64(lat) - float64(*l.TTFTNs)) / float64(u.CompletionTokens-1))
		}
	}
	if len(l.ITLNs) > 0 {
		var sum float64
		hi := l.ITLNs[0]
		e.gapRows = append(e.gapRows, gapSpan{row: row.Row, off: len(e.gaps), n: len(l.ITLNs)})
		e.gaps = append(e.gaps, l.ITLNs...)
		for _, g := range l.ITLNs {
			sum += float64(g)
			hi = max(hi, g)
		}
		row.ITLCount = ptr(int64(len(l.ITLNs)))
		row.ITLMeanNs, row.ITLMaxNs = ptr(sum/float64(len(l.ITLNs))), &hi
	}
	if !l.OK {
		// As the summary counts a failure: a record without a kind is a
		// protocol failure.
		kind := records.ErrProtocol
		if l.Error != nil && l.Error.Kind != "" {
			kind = l.Error.Kind
		}
		row.ErrorKind = &kind
	}
	if res != nil {
		row.ScheduledNs = res.ScheduledNs
		row.Status = i64(res.Status)
		row.Chunks = i64(res.Chunks)
		row.FinishReason = str(res.FinishReason)
		if res.Error != nil {
			row.ErrorMessage = str(res.Error.Message)
		}
	}
}

// metricsOf reads an islkit.metrics line; other lines without a request
// (send's run record) are no rows.
func metricsOf(line []byte) (records.Metrics, bool) {
	var m records.Metrics
	if !bytes.Contains(line, []byte(records.KindMetrics)) || json.Unmarshal(line, &m) != nil || m.Kind != records.KindMetrics {
		return records.Metrics{}, false
	}
	return m, true
}

// addMetrics adds the rows of one metrics record: a sample each, or the
// failed scrape.
func (e *Exporter) addMetrics(m records.Metrics) {
	base := MetricRow{Time: m.Time, ElapsedNs: m.ElapsedNs, URL: m.URL}
	if s := m.Stage; s != nil {
		base.StageIndex = ptr(int64(s.Index))
		if s.Concurrency != 0 {
			base.StageConcurrency = ptr(int64(s.Concurrency))
		}
		if s.Rate != 0 {
			base.StageRate = ptr(s.Rate)
		}
	}
	if m.Error != "" || len(m.Samples) == 0 {
		row := base
		row.Error = str(m.Error)
		e.metrics = append(e.metrics, row)
	}
	for _, s := range m.Samples {
		row := base
		row.Name = ptr(s.Name)
		labels := "{}"
		if len(s.Labels) > 0 {
			// Keys sorted (encoding/json's map order): one text per label set.
			b, _ := json.Marshal(s.Labels)
			labels = string(b)
		}
		row.Labels = &labels
		row.Value = ptr(s.Value)
		e.metrics = append(e.metrics, row)
	}
}

// Write writes every table; each file is replaced whole (outfile).
func (e *Exporter) Write() error {
	if e == nil {
		return nil
	}
	var opts report.Options
	if e.opts != nil {
		opts = *e.opts
	}
	stages := StageFigures(e.staged, opts)
	for _, t := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{TableRequests, func(w io.Writer) error { return writeTable(w, e.format, e.rows) }},
		{TableITL, func(w io.Writer) error { return writeBatches(w, e.format, e.itlRows) }},
		{TableStages, func(w io.Writer) error { return writeTable(w, e.format, stages) }},
		{TableMetrics, func(w io.Writer) error { return writeTable(w, e.format, e.metrics) }},
	} {
		if err := e.files[t.name].WriteWith(t.write); err != nil {
			return fmt.Errorf("--export %s table: %w", t.name, err)
		}
	}
	return nil
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func i64(p *int) *int64 {
	if p == nil {
		return nil
	}
	return ptr(int64(*p))
}

func ptr[T any](v T) *T { return &v }

// satAdd is a + b saturated, as the summary computes a request's end.
func satAdd(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return 1<<63 - 1
	}
	if a < 0 && b < 0 && s >= 0 {
		return -1 << 63
	}
	return s
}
