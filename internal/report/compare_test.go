package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compareRow finds the row of figure name in Compare's output and returns
// its A, B and ratio columns.
func compareRow(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == name {
			return f[1:]
		}
	}
	t.Errorf("no row %q in:\n%s", name, out)
	return []string{"", "", ""}
}

// A = handRun; B = its requests A and C only (0–1500 ms: 2 succeeded in
// 1.5 s, TTFT 100 and 50).
func TestCompare(t *testing.T) {
	a, _ := json.Marshal(handRun(Options{}))
	s := NewAccumulator()
	s.AddRequest(Request{ISL: rec(1000, ip(1000), nil, ip(0)), Live: live(0, 1000, 100, []int64{300, 300, 300}, 100, 4)})
	s.AddRequest(Request{ISL: rec(1000, ip(1000), nil, ip(0)), Live: live(1000, 500, 50, []int64{450}, 300, 2)})
	b, _ := json.Marshal(s)
	var out bytes.Buffer
	if err := Compare(&out, "a.json", a, "b.json", b); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for name, want := range map[string][3]string{
		// 1.25 req/s vs 2/1.5 = 1.333…: ratio 1.0667.
		"performance.request_throughput":       {"1.25", "1.333", "1.067"},
		"performance.ttft_ms.p50":              {"150", "75", "0.500"},
		"performance.succeeded":                {"4", "2", "0.500"},
		"performance.errors.http_5xx":          {"1", "n/a", "n/a"},
		"performance.cancelled":                {"1", "0", "0.000"},
		"requests":                             {"7", "2", "0.286"},
		"unreadable_lines.total":               {"0", "0", "="},
		"performance.by_turn[turn=1].requests": {"3", "n/a", "n/a"},
		"by_turn[turn=0].vs_target.n":          {"4", "2", "0.500"},
		"performance.tpot_ms.p50":              {"450", "375", "0.833"},
	} {
		row := compareRow(t, got, name)
		if [3]string(row) != want {
			t.Errorf("%s: %v, want %v", name, row, want)
		}
	}
	if strings.Contains(got, "timeline.bins") {
		t.Errorf("timeline bins compared:\n%s", got)
	}
	// A figure only B has comes after the one B has before it.
	if i, j := strings.Index(got, "performance.ttft_ms.p99 "), strings.Index(got, "performance.tpot_ms.n "); i < 0 || j < i {
		t.Errorf("rows out of order")
	}
}

func TestCompareRefusesOtherFiles(t *testing.T) {
	good, _ := json.Marshal(NewAccumulator())
	for _, bad := range []string{`[1]`, `{"kind":"islkit.request","schema_version":1}`, `{"kind":"islkit.summary","schema_version":9}`, `{"kind":`} {
		err := Compare(&bytes.Buffer{}, "a.json", good, "b.json", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), "b.json") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
