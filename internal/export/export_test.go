package export

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/export/exporttest"
	"github.com/islkit/islkit/internal/outfile"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/testutil"
)

// writeAll writes every table with one row of each row type (all nulls)
// into dir as base.csv or base.parquet and its siblings.
func writeAll(t *testing.T, dir string, format Format) map[string]string {
	t.Helper()
	paths := TablePaths(filepath.Join(dir, "run."+string(format)))
	write := func(table string, fn func(f *os.File) error) {
		f, err := os.Create(paths[table])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := fn(f); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	write(TableRequests, func(f *os.File) error { return writeTable(f, format, []RequestRow{{}}) })
	write(TableITL, func(f *os.File) error { return writeTable(f, format, []ITLRow{{}}) })
	write(TableStages, func(f *os.File) error { return writeTable(f, format, []StageRow{{}}) })
	write(TableMetrics, func(f *os.File) error { return writeTable(f, format, []MetricRow{{}}) })
	return paths
}

// TestDocListsTheColumnsWritten: schemas/export.md documents exactly the
// columns each table's files have, in their order and with their types,
// as parquet-go reads the Parquet schema back and encoding/csv the CSV
// header (a column added to a row struct without its documentation, or
// documented with another type, fails here).
func TestDocListsTheColumnsWritten(t *testing.T) {
	doc, err := exporttest.ReadDoc(filepath.Join(testutil.RepoRoot(t), "schemas", "export.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) != len(Tables) {
		t.Errorf("the doc has tables %v, want %v", doc, Tables)
	}
	dir := t.TempDir()
	pq := writeAll(t, dir, Parquet)
	csvPaths := writeAll(t, dir, CSV)
	for _, table := range Tables {
		want := doc[table]
		got, err := exporttest.ReadParquet(pq[table])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Columns, want) {
			t.Errorf("%s: the Parquet schema and the doc differ:\n%s", table, columnDiff(got.Columns, want))
		}
		// The CSV header, and its cells typed as the doc says.
		back, err := exporttest.ReadCSV(csvPaths[table], want)
		if err != nil {
			t.Errorf("%s: %v", table, err)
			continue
		}
		if len(back.Rows) != 1 || !reflect.DeepEqual(back.Rows, got.Rows) {
			t.Errorf("%s: CSV rows %v, Parquet rows %v", table, back.Rows, got.Rows)
		}
	}
}

func columnDiff(got, want []exporttest.Column) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w exporttest.Column
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			b.WriteString("  written " + g.Name + " " + g.Type + ", documented " + w.Name + " " + w.Type + "\n")
		}
	}
	return b.String()
}

func TestTablePathsAndFormat(t *testing.T) {
	got := TablePaths("out/run.v2.parquet")
	want := map[string]string{"requests": "out/run.v2.parquet", "itl": "out/run.v2.itl.parquet", "stages": "out/run.v2.stages.parquet", "metrics": "out/run.v2.metrics.parquet"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TablePaths = %v", got)
	}
	for path, f := range map[string]Format{"a.csv": CSV, "a.CSV": CSV, "b.parquet": Parquet} {
		if got, err := FormatOf(path); err != nil || got != f {
			t.Errorf("FormatOf(%s) = %q, %v", path, got, err)
		}
	}
	for _, path := range []string{"a.json", "a", "a.pq", "/dev/stdout"} {
		if _, err := FormatOf(path); err == nil || !strings.Contains(err.Error(), ".csv or .parquet") {
			t.Errorf("FormatOf(%s): %v", path, err)
		}
	}
}

// TestNewChecksEveryPath: the tables' paths are checked before any work,
// each under its own name, and a table's path taken by another output is
// refused.
func TestNewChecksEveryPath(t *testing.T) {
	dir := t.TempDir()
	var outs outfile.Set
	if _, err := outs.Add("--summary-json", filepath.Join(dir, "run.stages.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := New("--export", filepath.Join(dir, "run.csv"), &outs, &report.Options{}); err == nil || !strings.Contains(err.Error(), "stages table") {
		t.Errorf("a taken table path: %v", err)
	}
	if _, err := New("--export", filepath.Join(dir, "missing", "run.csv"), &outfile.Set{}, &report.Options{}); err == nil || !strings.Contains(err.Error(), "--export") {
		t.Errorf("a missing folder: %v", err)
	}
	if _, err := New("--export", filepath.Join(dir, "run.xlsx"), &outfile.Set{}, &report.Options{}); err == nil || !strings.Contains(err.Error(), "--export") {
		t.Errorf("a bad extension: %v", err)
	}
	if e, err := New("--export", "", &outfile.Set{}, &report.Options{}); e != nil || err != nil {
		t.Errorf("no --export: %v, %v", e, err)
	}
	var none *Exporter // no --export: every call does nothing
	none.Add(none.Prepare([][]byte{[]byte(`{}`)}, []report.Request{{}}), []report.Request{{}})
	if err := none.Write(); err != nil {
		t.Error(err)
	}
}

// TestMetricRows: each sample of an islkit.metrics record is a row with
// the scrape's time and stage, its labels as JSON with sorted keys; a
// failed scrape is one row with its error; other lines without requests
// (send's run record) are no row.
func TestMetricRows(t *testing.T) {
	e := &Exporter{}
	add(e, [][]byte{[]byte(`{"kind":"islkit.run","schema_version":1,"tool":"send"}`)}, nil)
	add(e, [][]byte{[]byte(`{"kind":"islkit.metrics","schema_version":1,"url":"http://h/metrics","time":"2026-01-02T03:04:05.5Z","elapsed_ns":7,"stage":{"index":2,"rate":2.5},"samples":[{"name":"vllm:num_requests_running","labels":{"z":"1","a":"2"},"value":3},{"name":"up","value":1}]}`)}, nil)
	add(e, [][]byte{[]byte(`{"kind":"islkit.metrics","schema_version":1,"url":"http://h/metrics","time":"2026-01-02T03:04:06Z","elapsed_ns":9,"error":"refused"}`)}, nil)
	idx, rate := int64(2), 2.5
	want := []MetricRow{
		{Time: "2026-01-02T03:04:05.5Z", ElapsedNs: 7, URL: "http://h/metrics", StageIndex: &idx, StageRate: &rate, Name: ptr("vllm:num_requests_running"), Labels: ptr(`{"a":"2","z":"1"}`), Value: ptr(3.0)},
		{Time: "2026-01-02T03:04:05.5Z", ElapsedNs: 7, URL: "http://h/metrics", StageIndex: &idx, StageRate: &rate, Name: ptr("up"), Labels: ptr(`{}`), Value: ptr(1.0)},
		{Time: "2026-01-02T03:04:06Z", ElapsedNs: 9, URL: "http://h/metrics", Error: ptr("refused")},
	}
	if !reflect.DeepEqual(e.metrics, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", e.metrics, want)
	}
	var b bytes.Buffer
	if err := writeTable(&b, CSV, e.metrics); err != nil {
		t.Fatal(err)
	}
	wantCSV := "time,elapsed_ns,url,stage_index,stage_concurrency,stage_rate,name,labels,value,error\n" +
		"2026-01-02T03:04:05.5Z,7,http://h/metrics,2,,2.5,vllm:num_requests_running,\"{\"\"a\"\":\"\"2\"\",\"\"z\"\":\"\"1\"\"}\",3,\n" +
		"2026-01-02T03:04:05.5Z,7,http://h/metrics,2,,2.5,up,{},1,\n" +
		"2026-01-02T03:04:06Z,9,http://h/metrics,,,,,,,refused\n"
	if b.String() != wantCSV {
		t.Errorf("CSV:\n%s\nwant\n%s", b.String(), wantCSV)
	}
}

// TestRequestRowOfASendRecord: a live send record's row, every value
// read off the record by hand.
func TestRequestRowOfASendRecord(t *testing.T) {
	line := []byte(`{"kind":"islkit.request","schema_version":1,"benchmark_id":"b1","endpoint":"chat","server":"sglang","conversation_id":"c","conversation_index":4,"turn":1,"pass":2,"target_isl":100,"expected_isl":101,"max_tokens":8,"dry_run":false,"stage":{"index":3,"concurrency":16},` +
		`"result":{"start_ns":1000,"scheduled_ns":990,"schedule_lag_ns":10,"latency_ns":5000,"ttft_ns":1000,"itl_ns":[100,300,200],"status":200,"ok":true,"stream":true,"chunks":5,"finish_reason":"length","usage":{"prompt_tokens":99,"completion_tokens":8}},"isl":{}}`)
	templated, target, expected, server := 102, 100, 101, 99
	turn := 1
	prompt := 99
	lag := int64(10)
	ttft := int64(1000)
	req := report.Request{
		ISL:  records.ISL{Templated: &templated, Counted: "templated", Profile: "vllm", Target: &target, Expected: &expected, Server: &server, ConversationID: "c", TurnIndex: &turn, Endpoint: "chat"},
		Live: &report.Live{StartNs: 1000, LatencyNs: 5000, TTFTNs: &ttft, ITLNs: []int64{100, 300, 200}, OK: true, Stream: true, Usage: &records.Usage{PromptTokens: &prompt, CompletionTokens: 8}, ScheduleLagNs: &lag},
	}
	e := &Exporter{}
	add(e, [][]byte{line}, []report.Request{req})
	r := e.rows[0]
	want := RequestRow{
		RecordKind: ptr("islkit.request"), BenchmarkID: ptr("b1"), ConversationID: ptr("c"), ConversationIndex: ptr(int64(4)), Turn: ptr(int64(1)), Pass: ptr(int64(2)),
		Endpoint: ptr("chat"), Server: ptr("sglang"), Profile: ptr("vllm"), StageIndex: ptr(int64(3)), StageConcurrency: ptr(int64(16)), Measured: true,
		TargetISL: ptr(int64(100)), ExpectedISL: ptr(int64(101)), ISL: ptr(int64(102)), ISLCounted: ptr("templated"), ISLTemplated: ptr(int64(102)), ServerISL: ptr(int64(99)),
		ISLVsTarget: ptr(int64(2)), ISLVsExpected: ptr(int64(1)), ISLVsServer: ptr(int64(-3)),
		MaxTokens: ptr(int64(8)), PromptTokens: ptr(int64(99)), OutputTokens: ptr(int64(8)),
		StartNs: ptr(int64(1000)), EndNs: ptr(int64(6000)), ScheduledNs: ptr(int64(990)), ScheduleLagNs: ptr(int64(10)), LatencyNs: ptr(int64(5000)), TTFTNs: ptr(int64(1000)),
		TPOTNs: ptr(4000.0 / 7), ITLCount: ptr(int64(3)), ITLMeanNs: ptr(200.0), ITLMaxNs: ptr(int64(300)), Chunks: ptr(int64(5)),
		Status: ptr(int64(200)), OK: ptr(true), Stream: ptr(true), FinishReason: ptr("length"),
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("row\n%+v\nwant\n%+v", r, want)
	}
	if want := []ITLRow{{0, 0, 100}, {0, 1, 300}, {0, 2, 200}}; !reflect.DeepEqual(itlRows(e), want) {
		t.Errorf("itl rows %v", itlRows(e))
	}
	// A failed request without an error kind is a protocol failure, as
	// the summary counts it; an AIPerf record (no line fields) keeps what
	// measure read.
	add(e, [][]byte{[]byte(`{"payload":{}}`)}, []report.Request{{Live: &report.Live{StartNs: 5, LatencyNs: -3}, Unmeasured: true}})
	r = e.rows[1]
	if r.Row != 1 || r.RecordKind != nil || r.ErrorKind == nil || *r.ErrorKind != "protocol" || r.Measured || r.ISL != nil || *r.EndNs != 5 || *r.OK {
		t.Errorf("failed AIPerf row %+v", r)
	}
}

// add is measure's use: Prepare in a worker, Add in the writer.
func add(e *Exporter, lines [][]byte, reqs []report.Request) {
	e.Add(e.Prepare(lines, reqs), reqs)
}

// itlRows collects the itl table's rows.
func itlRows(e *Exporter) []ITLRow {
	var out []ITLRow
	e.itlRows(func(rows []ITLRow) error { out = append(out, rows...); return nil })
	return out
}

// TestITLTableInBatches: the itl table written in batches holds every
// gap of every request in order, with the request's row, in both
// formats.
func TestITLTableInBatches(t *testing.T) {
	e := &Exporter{}
	var want []ITLRow
	for r := range 5 {
		gaps := make([]int64, 9000*r) // 0, 9000, ... gaps: past one batch
		for i := range gaps {
			gaps[i] = int64(r*100000 + i)
			want = append(want, ITLRow{Row: int64(r), Index: int64(i), ITLNs: gaps[i]})
		}
		add(e, [][]byte{[]byte(`{}`)}, []report.Request{{Live: &report.Live{ITLNs: gaps}}})
	}
	if got := itlRows(e); !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	dir := t.TempDir()
	for _, format := range []Format{CSV, Parquet} {
		path := filepath.Join(dir, "itl."+string(format))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeBatches(f, format, e.itlRows); err != nil {
			t.Fatal(err)
		}
		f.Close()
		cols := []exporttest.Column{{Name: "row", Type: "int64"}, {Name: "index", Type: "int64"}, {Name: "itl_ns", Type: "int64"}}
		var tb exporttest.Table
		if format == Parquet {
			tb, err = exporttest.ReadParquet(path)
		} else {
			tb, err = exporttest.ReadCSV(path, cols)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(tb.Rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d", format, len(tb.Rows), len(want))
		}
		for i, r := range tb.Rows {
			if w := want[i]; r[0] != w.Row || r[1] != w.Index || r[2] != w.ITLNs {
				t.Fatalf("%s: row %d is %v, want %v", format, i, r, w)
			}
		}
	}
}

// FuzzAdd: any line handed with a request, or alone, makes a row (or
// none) without panicking, and the rows write as CSV and Parquet.
func FuzzAdd(f *testing.F) {
	f.Add([]byte(`{"kind":"islkit.request","stage":{"index":1,"concurrency":2},"result":{"status":200}}`), true)
	f.Add([]byte(`{"kind":"islkit.metrics","samples":[{"name":"a","labels":{"x":"y"},"value":1}]}`), false)
	f.Add([]byte(`{"kind":"islkit.metrics","error":"x"}`), false)
	f.Add([]byte(`{"result":"nope","stage":[1]}`), true)
	f.Add([]byte("not json"), true)
	f.Fuzz(func(t *testing.T, line []byte, withRequest bool) {
		e := &Exporter{}
		if withRequest {
			add(e, [][]byte{line}, []report.Request{{Live: &report.Live{ITLNs: []int64{1}}}})
			if len(e.rows) != 1 {
				t.Fatalf("%d rows", len(e.rows))
			}
		} else {
			add(e, [][]byte{line}, nil)
		}
		for _, format := range []Format{CSV, Parquet} {
			var b bytes.Buffer
			if err := writeTable(&b, format, e.rows); err != nil {
				t.Fatal(err)
			}
			if err := writeTable(&b, format, e.metrics); err != nil {
				t.Fatal(err)
			}
			if err := writeBatches(&b, format, e.itlRows); err != nil {
				t.Fatal(err)
			}
		}
	})
}
