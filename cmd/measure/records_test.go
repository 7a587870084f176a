package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// liveRecord is a live send record of conversation conv whose payload and
// usage are given as JSON ("" leaves the payload out, as send --no-payload
// does).
func liveRecord(conv, payload, usage string) string {
	p := ""
	if payload != "" {
		p = `"payload":` + payload + `,`
	}
	return `{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"` + conv + `","conversation_index":0,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,` + p +
		`"result":{"start_ns":1000,"latency_ns":900,"ttft_ns":100,"status":200,"ok":true,"stream":true,"usage":` + usage + `}}` + "\n"
}

const hiPayload = `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`

// measured is what the tests read of an output record.
type measured struct {
	ConversationID string `json:"conversation_id"`
	ISL            struct {
		Counted string `json:"counted"`
		Bare    *int   `json:"bare"`
		Server  *int   `json:"server"`
		Error   string `json:"error"`
	} `json:"isl"`
}

// measureRecords runs measure on in with a --summary-json and returns its
// exit code, output records (each checked against the schema), stderr and
// the summary.
func measureRecords(t *testing.T, in string, args ...string) (int, []measured, string, map[string]any) {
	t.Helper()
	sum := filepath.Join(t.TempDir(), "s.json")
	code, out, errs := runCLI(in, append(args, "--summary-json", sum)...)
	var recs []measured
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		testutil.ValidateSchema(t, "measurement.schema.json", []byte(line))
		var m measured
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	var s map[string]any
	if b, err := os.ReadFile(sum); err == nil {
		testutil.ValidateSchema(t, "summary.schema.json", b)
		json.Unmarshal(b, &s)
	}
	return code, recs, errs, s
}

// perf reads summary["performance"][key].
func perf(s map[string]any, key string) any {
	p, _ := s["performance"].(map[string]any)
	return p[key]
}

// TestEveryRecordWrittenBack: a negative prompt_tokens from the server and
// a payload measure cannot read no longer remove their records: the output
// lines up with the input, each record says what went wrong (isl.error),
// the readable one keeps its counts, and all three count in the
// performance section; the lines are reported, exit 1 (issue 27, item 7:
// the run reported "requests 0").
func TestEveryRecordWrittenBack(t *testing.T) {
	in := liveRecord("c0", hiPayload, `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`) +
		liveRecord("c1", hiPayload, `{"prompt_tokens":-5,"completion_tokens":1,"total_tokens":10}`) +
		liveRecord("c2", `{"model":"m","messages":[{"role":"user","content":5}]}`, `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`)
	code, recs, errs, s := measureRecords(t, in)
	if code != 1 || !strings.Contains(errs, `<stdin>:2: field "result.usage.prompt_tokens"`) || !strings.Contains(errs, "<stdin>:3") {
		t.Errorf("exit %d, stderr %q; want 1 and lines 2 and 3 named", code, errs)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records written for 3 read", len(recs))
	}
	for i, r := range recs {
		if r.ConversationID != fmt.Sprintf("c%d", i) {
			t.Errorf("record %d is %s: the output does not line up with the input", i, r.ConversationID)
		}
	}
	// "Hi" is one token bare (Qwen3).
	if r := recs[1].ISL; r.Bare == nil || *r.Bare != 1 || r.Server != nil || !strings.Contains(r.Error, "prompt_tokens") {
		t.Errorf("negative prompt_tokens: isl %+v; want the bare count 1, no server count, the error", r)
	}
	if r := recs[2].ISL; r.Counted != "" || r.Error == "" {
		t.Errorf("unreadable payload: isl %+v; want the error and no count", r)
	}
	if s["requests"] != 2.0 || perf(s, "requests") != 3.0 || perf(s, "succeeded") != 3.0 {
		t.Errorf("summary: requests %v, performance requests %v, succeeded %v; want 2, 3, 3", s["requests"], perf(s, "requests"), perf(s, "succeeded"))
	}
}

// TestNoPayloadMeasured: send --no-payload records have no payload to
// recount, but their performance figures are whole: measure reports them,
// says on each record and in the summary that the ISL was not recounted,
// and exits 0 (issue 27, item 8: "no payload" failed every line).
func TestNoPayloadMeasured(t *testing.T) {
	in := liveRecord("c0", "", `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`) +
		liveRecord("c1", "", `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`)
	code, recs, errs, s := measureRecords(t, in, "--summary")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records written for 2 read", len(recs))
	}
	for _, r := range recs {
		if r.ISL.Server == nil || *r.ISL.Server != 9 || !strings.Contains(r.ISL.Error, "not be recounted") || r.ISL.Counted != "" {
			t.Errorf("isl %+v; want the server's 9 and the reason, no count", r.ISL)
		}
	}
	if s["no_payload"] != 2.0 || perf(s, "succeeded") != 2.0 {
		t.Errorf("summary: no_payload %v, succeeded %v; want 2, 2", s["no_payload"], perf(s, "succeeded"))
	}
	if !strings.Contains(errs, "no payload: 2 live records") {
		t.Errorf("the --summary table does not say so: %q", errs)
	}
}

// TestDuplicatesDropped: `cat s.jsonl s.jsonl | measure` counted every
// request twice (issue 27, item 3). Exact duplicates are dropped from the
// output and the figures, and counted; a warmup record of the same
// conversation and turn is another request.
func TestDuplicatesDropped(t *testing.T) {
	usage := `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`
	run := liveRecord("c0", hiPayload, usage) + liveRecord("c1", hiPayload, usage) +
		strings.Replace(liveRecord("c0", hiPayload, usage), `"dry_run":false`, `"dry_run":false,"warmup":true`, 1)
	code, recs, errs, s := measureRecords(t, run+run, "--summary")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if len(recs) != 3 {
		t.Errorf("%d records written, want the 3 distinct ones", len(recs))
	}
	if s["requests"] != 2.0 || perf(s, "requests") != 2.0 || s["warmup_excluded"] != 1.0 || s["duplicates_dropped"] != 3.0 {
		t.Errorf("summary: requests %v, performance requests %v, warmup %v, duplicates %v; want 2, 2, 1, 3",
			s["requests"], perf(s, "requests"), s["warmup_excluded"], s["duplicates_dropped"])
	}
	if !strings.Contains(errs, "dropped 3 duplicate record(s)") || !strings.Contains(errs, "duplicates dropped: 3") {
		t.Errorf("stderr does not tell the duplicates: %q", errs)
	}
}

// TestSameKeyOtherContentRefused: two records of one request (benchmark,
// conversation, pass, turn) with different content are two runs mixed up:
// the second is reported naming both lines, not counted, and the exit
// status is 1.
func TestSameKeyOtherContentRefused(t *testing.T) {
	in := liveRecord("c0", hiPayload, `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`) +
		liveRecord("c1", hiPayload, `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`) +
		liveRecord("c0", hiPayload, `{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}`)
	code, recs, errs, s := measureRecords(t, in)
	if code != 1 || !strings.Contains(errs, "<stdin>:3: ") || !strings.Contains(errs, "recorded already at <stdin>:1") {
		t.Errorf("exit %d, stderr %q; want 1 and lines 3 and 1 named", code, errs)
	}
	if len(recs) != 3 || s["requests"] != 2.0 || perf(s, "requests") != 2.0 {
		t.Errorf("%d records written, summary requests %v / %v; want 3 written, 2 counted", len(recs), s["requests"], perf(s, "requests"))
	}
}

// runLine is a send run record with the given concurrency.
func runLine(concurrency int) string {
	return fmt.Sprintf(`{"kind":"islkit.run","schema_version":1,"tool":"send","version":"v1","started":"2026-01-02T03:04:05Z","command_line":["--url","http://h:8000","--concurrency","%d"],"url":"http://h:8000","endpoint":"chat","model":"m","stream":true,"concurrency":%d,"rate":0,"requests":0,"conversations":2}`, concurrency, concurrency) + "\n"
}

// TestRunRecordInSummary: send's run record passes through measure
// unchanged, is no request, and its configuration is in the summary (text,
// JSON, the HTML report); --compare of two runs names what differed
// (issue 27, item 14).
func TestRunRecordInSummary(t *testing.T) {
	dir := t.TempDir()
	usage := `{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}`
	var sums [2]string
	for i, conc := range []int{2, 8} {
		in := runLine(conc) + liveRecord("c0", hiPayload, usage)
		sums[i] = filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		html := filepath.Join(dir, fmt.Sprintf("r%d.html", i))
		code, out, errs := runCLI(in, "--summary", "--summary-json", sums[i], "--report", html)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if first, _, _ := strings.Cut(out, "\n"); first+"\n" != runLine(conc) {
			t.Errorf("first output line %q, want the run record unchanged", first)
		}
		wantRun := fmt.Sprintf("run: send v1 started 2026-01-02T03:04:05Z: chat http://h:8000, model m, concurrency %d", conc)
		if !strings.Contains(errs, wantRun) || !strings.Contains(errs, "requests 1 ") {
			t.Errorf("--summary lacks %q or counts the run record as a request:\n%s", wantRun, errs)
		}
		if page, _ := os.ReadFile(html); !strings.Contains(string(page), wantRun) {
			t.Errorf("the report does not show the run's configuration")
		}
		b, _ := os.ReadFile(sums[i])
		testutil.ValidateSchema(t, "summary.schema.json", b)
		var s struct {
			Runs []struct {
				Concurrency int `json:"concurrency"`
			} `json:"runs"`
		}
		if json.Unmarshal(b, &s); len(s.Runs) != 1 || s.Runs[0].Concurrency != conc {
			t.Errorf("summary runs %+v, want one of concurrency %d", s.Runs, conc)
		}
	}
	code, out, errs := runCLI("", "--compare", sums[0], sums[1])
	if code != 0 {
		t.Fatalf("--compare: exit %d: %s", code, errs)
	}
	var diff []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "concurrency" || f[0] == "command_line" || f[0] == "url") {
			diff = append(diff, strings.Join(f, " "))
		}
	}
	want := []string{"command_line --url http://h:8000 --concurrency 2 --url http://h:8000 --concurrency 8", "concurrency 2 8"}
	if strings.Join(diff, "\n") != strings.Join(want, "\n") {
		t.Errorf("--compare configuration rows:\n%s\nwant:\n%s\n(output:\n%s)", strings.Join(diff, "\n"), strings.Join(want, "\n"), out)
	}
}

// TestOutputCountedWithoutUsage: a server that sends no usage left the
// output throughput at 0 (issue 27, item 13). measure counts the streamed
// text (output and reasoning) with its tokenizer and says so: "Hello
// world" is 2 tokens for Qwen3 ([9707, 1879], HF tokenizers; as in
// TestExitCodes).
func TestOutputCountedWithoutUsage(t *testing.T) {
	withText := func(conv, text, reasoning string) string {
		return strings.Replace(liveRecord(conv, hiPayload, "null"), `"ok":true`,
			`"ok":true,"output_text":"`+text+`","reasoning_text":"`+reasoning+`"`, 1)
	}
	in := withText("c0", "Hello world", "") + withText("c1", "Hello world", "Hello world")
	code, _, errs, s := measureRecords(t, in, "--summary")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if perf(s, "output_tokens") != 6.0 || perf(s, "output_tokens_counted") != 2.0 || perf(s, "without_usage") != 0.0 {
		t.Errorf("output_tokens %v, counted %v, without usage %v; want 6, 2, 0",
			perf(s, "output_tokens"), perf(s, "output_tokens_counted"), perf(s, "without_usage"))
	}
	if !strings.Contains(errs, "output tokens counted by islkit: 2 requests had no server usage") {
		t.Errorf("the summary does not say so:\n%s", errs)
	}
}
