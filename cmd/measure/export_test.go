package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/islkit/islkit/internal/export"
	"github.com/islkit/islkit/internal/export/exporttest"
)

// sweepMetrics are two scrapes appended to the recorded sweep (the test
// server of the recording had no /metrics): the metrics table's rows.
const sweepMetrics = `{"kind":"islkit.metrics","schema_version":1,"url":"http://127.0.0.1:8000/metrics","time":"2026-12-02T02:52:30.25Z","elapsed_ns":250000000,"stage":{"index":0,"concurrency":1},"samples":[{"name":"vllm:num_requests_running","labels":{"model_name":"m"},"value":1},{"name":"vllm:prompt_tokens_total","labels":{"model_name":"m"},"value":2100}]}
{"kind":"islkit.metrics","schema_version":1,"url":"http://127.0.0.1:8000/metrics","time":"2026-12-02T02:52:30.5Z","elapsed_ns":500000000,"error":"connection refused"}
`

// readSweep is testdata/sweep.jsonl.gz: three concurrency stages (1, 2,
// 4) of 24 requests against islkit-testserver failing about 10% of them
// (500s, truncated streams), the first 2 of the first stage warmup ones;
// recorded by
// `BIN=bin scripts/export-sweep.sh | gzip -9n`.
func readSweep(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sweep.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(data) + sweepMetrics
}

// exported is one --export run read back: each table by name.
type exported map[string]exporttest.Table

// exportRun measures in with --export dir/run.EXT and the summary, and
// reads the tables back (Parquet by its own schema; CSV with the types
// of the documented columns).
func exportRun(t *testing.T, in, ext string, args ...string) (exported, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.json")
	path := filepath.Join(dir, "run."+ext)
	code, _, errs := runCLI(in, append([]string{"--apply-chat-template", "--summary-json", sum, "--export", path}, args...)...)
	if code != 0 {
		t.Fatalf("measure: exit %d\n%s", code, errs)
	}
	doc, err := exporttest.ReadDoc(filepath.Join("..", "..", "schemas", "export.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := exported{}
	for table, p := range export.TablePaths(path) {
		var tb exporttest.Table
		if ext == "parquet" {
			tb, err = exporttest.ReadParquet(p)
		} else {
			tb, err = exporttest.ReadCSV(p, doc[table])
		}
		if err != nil {
			t.Fatal(err)
		}
		out[table] = tb
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return out, s
}

// TestExportRecomputesTheSummary: a recorded sweep measured with
// --export to CSV and to Parquet; both formats read back hold the same
// rows, and every figure of --summary-json (the counts, the ISL error
// statistics, latency statistics and percentiles, throughput, goodput,
// concurrency) recomputed from the rows with the summary's definitions
// equals measure's, to the last bit. The per-stage table's rows equal the
// summary of each stage's records measured alone.
func TestExportRecomputesTheSummary(t *testing.T) {
	in := readSweep(t)
	args := []string{"--slo", "ttft=7ms,tpot=0.6ms,e2e=20ms", "--percentiles", "25,99.9"}
	csvTables, sum := exportRun(t, in, "csv", args...)
	pqTables, sum2 := exportRun(t, in, "parquet", args...)
	if !reflect.DeepEqual(sum, sum2) {
		t.Fatal("the two runs' summaries differ")
	}
	for _, table := range export.Tables {
		if !reflect.DeepEqual(csvTables[table].Rows, pqTables[table].Rows) {
			t.Errorf("%s: the CSV and Parquet rows differ", table)
		}
		if !reflect.DeepEqual(csvTables[table].Columns, pqTables[table].Columns) {
			t.Errorf("%s: the CSV (documented) and Parquet columns differ", table)
		}
	}
	reqs := pqTables[export.TableRequests].Maps()
	if len(reqs) != 72 {
		t.Fatalf("%d request rows, want 72 (2 of them warmup)", len(reqs))
	}
	got := recompute(reqs, pqTables[export.TableITL].Maps(), []float64{50, 90, 95, 99, 25, 99.9}, slo{ttft: 7, tpot: 0.6, e2e: 20})
	compareFigures(t, got, sum)
	if got["performance.failed"].(int64) == 0 || got["warmup_excluded"].(int64) != 2 || got["vs_target.n"].(int64) == 0 {
		t.Errorf("the sweep lacks failures, warmup or ISL errors: %v", got)
	}

	// The metrics table: one row per sample, one per failed scrape.
	m := pqTables[export.TableMetrics].Maps()
	if len(m) != 3 || m[0]["name"] != "vllm:num_requests_running" || m[0]["labels"] != `{"model_name":"m"}` || m[0]["value"] != 1.0 ||
		m[0]["stage_index"] != int64(0) || m[0]["stage_concurrency"] != int64(1) || m[1]["value"] != 2100.0 || m[2]["error"] != "connection refused" || m[2]["name"] != nil {
		t.Errorf("metrics rows %v", m)
	}

	// Each stage's row is the summary's figures of that stage (its
	// stages), and that stage's requests measured alone.
	stages := pqTables[export.TableStages].Maps()
	if len(stages) != 3 {
		t.Fatalf("%d stage rows", len(stages))
	}
	summaryStages, _ := sum["stages"].([]any)
	if len(summaryStages) != 3 {
		t.Fatalf("the summary has %d stages", len(summaryStages))
	}
	for i, st := range stages {
		want := summaryStages[i].(map[string]any)
		for col, path := range map[string]string{
			"stage_index": "index", "concurrency": "concurrency", "requests": "requests", "succeeded": "succeeded", "duration_s": "duration_s",
			"request_throughput": "request_throughput", "output_token_throughput": "output_token_throughput",
			"ttft_p50_ms": "ttft_p50_ms", "ttft_p99_ms": "ttft_p99_ms", "itl_p50_ms": "itl_p50_ms", "itl_p99_ms": "itl_p99_ms",
			"goodput_requests": "goodput.requests", "goodput_throughput": "goodput.request_throughput", "goodput_fraction": "goodput.fraction",
		} {
			if !sameNumber(st[col], lookup(want, path)) {
				t.Errorf("stage %d %s = %v, the summary's stages %v", i, col, st[col], lookup(want, path))
			}
		}
		if st["slo_verdict"] == nil || st["slo_verdict"] != want["slo_verdict"] {
			t.Errorf("stage %d slo_verdict %v, the summary's %v", i, st["slo_verdict"], want["slo_verdict"])
		}
	}
	lines := strings.SplitAfter(in, "\n")
	for i, st := range stages {
		if st["stage_index"] != int64(i) || st["concurrency"] != int64(1)<<i {
			t.Errorf("stage row %d: %v", i, st)
		}
		var one strings.Builder
		for _, l := range lines {
			if strings.Contains(l, fmt.Sprintf(`"stage":{"index":%d,`, i)) {
				one.WriteString(l)
			}
		}
		_, alone := exportRun(t, one.String(), "csv", args...)
		p := alone["performance"].(map[string]any)
		for col, path := range map[string]string{
			"requests": "requests", "succeeded": "succeeded", "failed": "failed", "duration_s": "duration_s",
			"output_tokens": "output_tokens", "request_throughput": "request_throughput", "output_token_throughput": "output_token_throughput",
			"mean_concurrency": "mean_concurrency", "peak_concurrency": "peak_concurrency",
			"ttft_p50_ms": "ttft_ms.p50", "ttft_p99_ms": "ttft_ms.p99", "itl_p99_ms": "itl_ms.p99", "tpot_mean_ms": "tpot_ms.mean",
			"e2e_p90_ms": "e2e_ms.p90", "goodput_requests": "goodput.requests", "goodput_fraction": "goodput.fraction",
		} {
			want := lookup(p, path)
			if !sameNumber(st[col], want) {
				t.Errorf("stage %d %s = %v, measured alone %v", i, col, st[col], want)
			}
		}
	}
}

type slo struct{ ttft, tpot, e2e float64 } // ms

// recompute derives the summary's figures from the rows, by the
// definitions (report.Definitions, vLLM bench serve's): a map from the
// figure's path in --summary-json to its value (int64 or float64).
func recompute(reqs, itl []map[string]any, pcts []float64, o slo) map[string]any {
	out := map[string]any{}
	gapsOf := map[int64][]int64{}
	for _, g := range itl {
		gapsOf[g["row"].(int64)] = append(gapsOf[g["row"].(int64)], g["itl_ns"].(int64))
	}
	var warmup, requests, templated, bare int64
	errs := map[string][]int64{} // by comparison, and by "by_turn.N." + comparison
	byTurn := map[int64]int64{}
	var live []map[string]any
	for _, r := range reqs {
		if r["warmup"].(bool) {
			warmup++
			continue
		}
		if r["ok"] != nil {
			live = append(live, r)
		}
		if !r["measured"].(bool) {
			continue
		}
		requests++
		if r["isl_counted"] == "templated" {
			templated++
		} else {
			bare++
		}
		turn, hasTurn := r["turn"].(int64)
		if hasTurn {
			byTurn[turn]++
		}
		for _, c := range []string{"vs_target", "vs_expected", "vs_server"} {
			if v, ok := r["isl_"+c].(int64); ok {
				errs[c] = append(errs[c], v)
				if hasTurn {
					k := fmt.Sprintf("by_turn.%d.%s", turn, c)
					errs[k] = append(errs[k], v)
				}
			}
		}
	}
	out["warmup_excluded"], out["requests"] = warmup, requests
	out["counted.templated"], out["counted.bare"] = templated, bare
	for t, n := range byTurn {
		out[fmt.Sprintf("by_turn.%d.requests", t)] = n
	}
	for c, vs := range errs {
		islErrors(out, c, vs)
	}

	// Performance.
	p := "performance."
	var succeeded, failed, cancelled, streamed, withoutUsage, input, output, counted, retried int64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var inFlight float64
	kinds := map[string]int64{}
	var ttft, e2e, gaps, lags []int64
	var tpot []float64
	var good int64
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, r := range live {
		start, end, lat := r["start_ns"].(int64), r["end_ns"].(int64), max(r["latency_ns"].(int64), 0)
		lo, hi = min(lo, start), max(hi, end)
		inFlight += float64(lat)
		evs = append(evs, ev{start, 1}, ev{end, -1})
		if v, ok := r["schedule_lag_ns"].(int64); ok {
			lags = append(lags, v)
		}
		if r["retried"].(bool) {
			retried++
		}
		if !r["ok"].(bool) {
			if r["error_kind"] == "cancelled" {
				cancelled++
			} else {
				failed++
				kinds[r["error_kind"].(string)]++
			}
			continue
		}
		succeeded++
		e2e = append(e2e, lat)
		out_, hasUsage := r["output_tokens"].(int64)
		if hasUsage {
			output += out_
			if v, ok := r["prompt_tokens"].(int64); ok {
				input += v
			}
			if r["output_tokens_counted"].(bool) {
				counted++
			}
		} else {
			withoutUsage++
		}
		t, isStreamed := r["ttft_ns"].(int64)
		isStreamed = isStreamed && r["stream"].(bool)
		var tp float64
		hasTPOT := false
		if isStreamed {
			streamed++
			ttft = append(ttft, t)
			gaps = append(gaps, gapsOf[r["row"].(int64)]...)
			if hasUsage && out_ > 1 {
				tp, hasTPOT = (float64(lat)-float64(t))/float64(out_-1), true
				tpot = append(tpot, tp)
			}
		}
		// Goodput: every SLO met (tpot counts as 0 when undefined; a
		// request without a TTFT meets no TTFT or TPOT objective).
		meets := isStreamed && float64(t) <= o.ttft*1e6 && (!hasTPOT || tp <= o.tpot*1e6) && float64(lat) <= o.e2e*1e6
		if meets {
			good++
		}
	}
	n := int64(len(live))
	d := (float64(hi) - float64(lo)) / 1e9
	for k, v := range map[string]any{
		"requests": n, "succeeded": succeeded, "failed": failed, "cancelled": cancelled, "streamed": streamed,
		"without_usage": withoutUsage, "output_tokens_counted": counted, "input_tokens": input, "output_tokens": output,
		"duration_s": d, "request_throughput": float64(succeeded) / d, "output_token_throughput": float64(output) / d,
		"total_token_throughput": float64(input+output) / d, "mean_concurrency": inFlight / 1e9 / d, "retried": retried,
		"goodput.requests": good, "goodput.request_throughput": float64(good) / d, "goodput.fraction": float64(good) / float64(n),
	} {
		out[p+k] = v
	}
	for k, v := range kinds {
		out[p+"errors."+k] = v
	}
	// Peak concurrency: intervals [start, end), an end before a start at
	// the same instant.
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].d < evs[j].d
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	out[p+"peak_concurrency"] = int64(peak)
	asFloat := func(vs []int64) []float64 {
		f := make([]float64, len(vs))
		for i, v := range vs {
			f[i] = float64(v)
		}
		return f
	}
	latencyStats(out, p+"ttft_ms", asFloat(ttft), pcts)
	latencyStats(out, p+"tpot_ms", tpot, pcts)
	latencyStats(out, p+"itl_ms", asFloat(gaps), pcts)
	latencyStats(out, p+"e2e_ms", asFloat(e2e), pcts)
	latencyStats(out, p+"schedule_lag_ms", asFloat(lags), pcts)
	return out
}

// latencyStats: n, mean, population std, min, max and percentiles by
// linear interpolation between closest ranks (numpy's default), in ms of
// values given in ns.
func latencyStats(out map[string]any, key string, ns []float64, pcts []float64) {
	out[key+".n"] = int64(len(ns))
	ms := make([]float64, len(ns))
	var sum float64
	for i, v := range ns {
		ms[i] = v / 1e6
		sum += ms[i]
	}
	slices.Sort(ms)
	mean := sum / float64(len(ms))
	var ss float64
	for _, v := range ms {
		ss += (v - mean) * (v - mean)
	}
	out[key+".mean"], out[key+".std"] = mean, math.Sqrt(ss/float64(len(ms)))
	out[key+".min"], out[key+".max"] = ms[0], ms[len(ms)-1]
	for _, p := range pcts {
		rank := p / 100 * float64(len(ms)-1)
		i := int(math.Floor(rank))
		j := min(i+1, len(ms)-1)
		v := ms[i]
		if f := rank - float64(i); f != 0 && ms[j] != ms[i] {
			v = ms[i] + (ms[j]-ms[i])*f
		}
		out[fmt.Sprintf("%s.p%g", key, p)] = v
	}
}

// islErrors: the summary's error statistics of one comparison: n, exact
// hits, their share, mean signed and absolute error, nearest-rank p50 and
// p99 of |error| (the smallest value with at least ⌈p·n/100⌉ values at or
// below it), the extremes.
func islErrors(out map[string]any, key string, vs []int64) {
	n := int64(len(vs))
	abs := make([]int64, len(vs))
	var exact, sum, sumAbs int64
	for i, v := range vs {
		abs[i] = max(v, -v)
		sum += v
		sumAbs += abs[i]
		if v == 0 {
			exact++
		}
	}
	slices.Sort(abs)
	rank := func(p int64) int64 { return abs[max((p*n+99)/100, 1)-1] }
	out[key+".n"], out[key+".exact"] = n, exact
	out[key+".exact_pct"] = 100 * float64(exact) / float64(n)
	out[key+".mean_error"], out[key+".mean_abs_error"] = float64(sum)/float64(n), float64(sumAbs)/float64(n)
	out[key+".p50_abs_error"], out[key+".p99_abs_error"], out[key+".max_abs_error"] = rank(50), rank(99), abs[n-1]
	out[key+".min_error"], out[key+".max_error"] = slices.Min(vs), slices.Max(vs)
}

// compareFigures checks every recomputed figure against the summary's
// figure at its path ("performance.ttft_ms.p50", "by_turn.1.requests":
// the element with turn 1).
func compareFigures(t *testing.T, got map[string]any, sum map[string]any) {
	t.Helper()
	if len(got) < 100 {
		t.Fatalf("only %d figures recomputed", len(got))
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	}) {
		want := lookup(sum, k)
		if !sameNumber(got[k], want) {
			t.Errorf("%s: recomputed %v, summary %v", k, got[k], want)
		}
	}
}

// lookup follows a dotted path into decoded JSON; "by_turn.N" picks the
// element whose turn is N; a member named with a dot ("p99.9") is found.
func lookup(v any, path string) any {
	keys := strings.Split(path, ".")
	for i := 0; i < len(keys); i++ {
		k := keys[i]
		switch x := v.(type) {
		case map[string]any:
			if i+1 < len(keys) {
				if _, ok := x[k+"."+keys[i+1]]; ok {
					k += "." + keys[i+1]
					i++
				}
			}
			v = x[k]
		case []any:
			v = nil
			for _, e := range x {
				if m, ok := e.(map[string]any); ok && fmt.Sprint(m["turn"]) == k {
					v = e
				}
			}
		default:
			return nil
		}
	}
	return v
}

// sameNumber compares a recomputed int64 or float64 with a JSON number
// (float64; the summary's integers are exact in it) bit for bit.
func sameNumber(got, want any) bool {
	w, ok := want.(float64)
	if !ok {
		return false
	}
	switch g := got.(type) {
	case int64:
		return float64(g) == w
	case float64:
		return g == w
	}
	return false
}

// TestExportUsage: --export's format is told by the extension and its
// tables' paths are checked before any input is read (exit 2, naming the
// flag); a dry run's requests are rows without an outcome, and its
// stages table has only its header.
func TestExportUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--export", filepath.Join(dir, "run.json")},
		{"--export", filepath.Join(dir, "no", "run.csv")},
		{"--export", filepath.Join(dir, "run.csv"), "--summary-json", filepath.Join(dir, "run.itl.csv")},
	} {
		if code, _, errs := runCLI("", args...); code != 2 || !strings.Contains(errs, "--export") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	dry := `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":true,"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]}}` + "\n"
	path := filepath.Join(dir, "dry.csv")
	if code, _, errs := runCLI(dry, "--export", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	doc, err := exporttest.ReadDoc(filepath.Join("..", "..", "schemas", "export.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := export.TablePaths(path)
	reqs, err := exporttest.ReadCSV(paths[export.TableRequests], doc[export.TableRequests])
	if err != nil {
		t.Fatal(err)
	}
	rows := reqs.Maps()
	// Counted (its ISL is there), with no outcome.
	if len(rows) != 1 || rows[0]["dry_run"] != true || rows[0]["ok"] != nil || rows[0]["start_ns"] != nil || rows[0]["isl"] == nil || rows[0]["target_isl"] != int64(10) {
		t.Errorf("dry-run row %v", rows)
	}
	for _, table := range []string{export.TableITL, export.TableStages, export.TableMetrics} {
		tb, err := exporttest.ReadCSV(paths[table], doc[table])
		if err != nil || len(tb.Rows) != 0 {
			t.Errorf("%s: %v, %d rows", table, err, len(tb.Rows))
		}
	}
}

// TestMetricsRecordsPassThrough: send's islkit.metrics records are
// written back unchanged, in their place, and are no failure.
func TestMetricsRecordsPassThrough(t *testing.T) {
	code, out, errs := runCLI(sweepMetrics)
	if code != 0 || out != sweepMetrics {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errs)
	}
}

// TestSignalWritesTheTables: a SIGTERM while measure waits inside a line
// that never ends still writes the tables of the records it read, as it
// writes the summary.
func TestSignalWritesTheTables(t *testing.T) {
	first, now := fakeSignals(t)
	path := filepath.Join(t.TempDir(), "run.csv")
	var out, errb bytes.Buffer
	pw, done := startMeasure([]string{"--workers", "2", "--export", path}, &out, &errb)
	defer pw.Close()
	pw.Write([]byte(strings.Repeat(chatLine, 3) + `{"model":"m","messages":[{"role":"user","content":"an unfinished li`))
	first(syscall.SIGTERM)
	now(syscall.SIGTERM)
	if code := exitCode(t, done); code != 143 {
		t.Errorf("exit %d, want 143; stderr %q", code, errb.String())
	}
	doc, err := exporttest.ReadDoc(filepath.Join("..", "..", "schemas", "export.md"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := exporttest.ReadCSV(path, doc[export.TableRequests])
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 3 {
		t.Errorf("%d rows, want the 3 records read", len(tb.Rows))
	}
	for _, r := range tb.Maps() {
		if r["isl"] != int64(1) || r["record_kind"] != nil {
			t.Errorf("row %v: want the bare count of \"Hi\", 1", r)
		}
	}
}
