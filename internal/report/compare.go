package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/records"
)

// CompareFiles reads two summaries written by --summary-json and writes
// them side by side (measure --compare).
func CompareFiles(w io.Writer, pathA, pathB string) error {
	a, err := os.ReadFile(pathA)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pathB)
	if err != nil {
		return err
	}
	return Compare(w, pathA, a, pathB, b)
}

// figure is one numeric leaf of a summary: its path and value (nil for
// null).
type figure struct {
	path string
	v    *float64
}

// Compare writes every figure of summaries a and b, in a's order (b's
// extra figures after their predecessor), with the ratio b/a. The time
// bins of the timeline are left out: they are not aligned between runs.
func Compare(w io.Writer, nameA string, a []byte, nameB string, b []byte) error {
	fa, err := summaryFigures(nameA, a)
	if err != nil {
		return err
	}
	fb, err := summaryFigures(nameB, b)
	if err != nil {
		return err
	}
	va, vb := map[string]*float64{}, map[string]*float64{}
	var order []string
	for _, f := range fa {
		va[f.path] = f.v
		order = append(order, f.path)
	}
	pos := map[string]int{}
	for i, p := range order {
		pos[p] = i
	}
	// b's figures that a lacks go after the figure b has before them.
	after := -1
	var inserts = map[int][]string{}
	for _, f := range fb {
		vb[f.path] = f.v
		if i, ok := pos[f.path]; ok {
			after = i
			continue
		}
		inserts[after] = append(inserts[after], f.path)
	}
	var rows []string
	rows = append(rows, inserts[-1]...)
	for i, p := range order {
		rows = append(rows, p)
		rows = append(rows, inserts[i]...)
	}
	bw := bufio.NewWriter(w)
	if cfg := configDiff(a, b); cfg != nil {
		cfg.writeText(bw)
		bw.WriteString("\n")
	}
	t := table{head: []string{"figure", "A", "B", "B/A"},
		note: "A = " + nameA + ", B = " + nameB + "; n/a: absent or null; ratio n/a when A is 0"}
	for _, p := range rows {
		x, y := va[p], vb[p]
		t.rows = append(t.rows, []string{p, number(x), number(y), ratio(x, y)})
	}
	t.writeText(bw)
	return bw.Flush()
}

// configDiff is the table of the run configuration fields (the summaries'
// runs: send's islkit.run records) in which a and b differ; nil when
// neither has one. Several runs (shards) give their values joined by " | ".
func configDiff(a, b []byte) *table {
	ca, oka := runConfig(a)
	cb, okb := runConfig(b)
	if !oka && !okb {
		return nil
	}
	t := &table{head: []string{"configuration", "A", "B"}}
	switch {
	case !oka:
		t.note = "A has no run configuration (records without send's islkit.run line)"
	case !okb:
		t.note = "B has no run configuration (records without send's islkit.run line)"
	}
	rt := reflect.TypeOf(records.Run{})
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "kind" || name == "schema_version" || ca[name] == cb[name] {
			continue
		}
		t.rows = append(t.rows, []string{name, orNone(ca[name]), orNone(cb[name])})
	}
	if len(t.rows) == 0 && t.note == "" {
		t.note = "the same run configuration"
	}
	return t
}

// runConfig reads a summary's runs as field → value text.
func runConfig(data []byte) (map[string]string, bool) {
	var s struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if json.Unmarshal(data, &s) != nil || len(s.Runs) == 0 {
		return nil, false
	}
	out := map[string]string{}
	for _, run := range s.Runs {
		for k, raw := range run {
			var buf bytes.Buffer
			json.Compact(&buf, raw)
			v := buf.String()
			var str string
			var strs []string
			if json.Unmarshal(raw, &str) == nil {
				v = str
			} else if json.Unmarshal(raw, &strs) == nil {
				v = strings.Join(strs, " ") // a command line
			}
			if have, ok := out[k]; ok {
				v = have + " | " + v
			}
			out[k] = v
		}
	}
	return out, true
}

func orNone(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

func number(v *float64) string {
	if v == nil {
		return "n/a"
	}
	if *v == math.Trunc(*v) && math.Abs(*v) < 1e15 {
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(*v, 'f', 3, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

func ratio(a, b *float64) string {
	switch {
	case a == nil || b == nil:
		return "n/a"
	case *a == 0 && *b == 0:
		return "="
	case *a == 0:
		return "n/a"
	}
	return strconv.FormatFloat(*b / *a, 'f', 3, 64)
}

// summaryFigures checks that data is a summary this measure writes and
// lists its numeric leaves in file order.
func summaryFigures(name string, data []byte) ([]figure, error) {
	var head struct {
		Kind          *string `json:"kind"`
		SchemaVersion *int    `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a summary JSON object: %v", name, err)
	}
	if head.Kind == nil || *head.Kind != records.KindSummary {
		return nil, fmt.Errorf("%s: field \"kind\": want %q (a file written by measure --summary-json)", name, records.KindSummary)
	}
	if head.SchemaVersion == nil || *head.SchemaVersion != records.SchemaVersion {
		return nil, fmt.Errorf("%s: field \"schema_version\": want %d", name, records.SchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []figure
	if err := walk(dec, "", &out); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// walk reads one JSON value from dec and appends its numeric leaves under
// path. An array element that is an object starting with an identifying
// member (turn, isl_min, cause) is named by it: by_turn[turn=1].
func walk(dec *json.Decoder, path string, out *[]figure) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return walkFrom(dec, tok, path, out)
}

func walkFrom(dec *json.Decoder, tok json.Token, path string, out *[]figure) error {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if p := join(path, k); p == "server_metrics.series" {
					// The scraped series over time: not aligned between
					// runs, as the timeline's bins are not.
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				if err := walk(dec, join(path, k), out); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			return err
		case '[':
			for i := 0; dec.More(); i++ {
				t, err := dec.Token()
				if err != nil {
					return err
				}
				if d, ok := t.(json.Delim); ok && d == '{' {
					if err := walkElement(dec, path, i, out); err != nil {
						return err
					}
					continue
				}
				if err := walkFrom(dec, t, fmt.Sprintf("%s[%d]", path, i), out); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			return err
		}
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return err
		}
		*out = append(*out, figure{path, &f})
	case nil:
		*out = append(*out, figure{path, nil})
	}
	return nil // strings and booleans are not figures
}

// walkElement reads an object inside an array (its '{' already read).
func walkElement(dec *json.Decoder, path string, i int, out *[]figure) error {
	name := fmt.Sprintf("%s[%d]", path, i)
	first := true
	skipTimeline := strings.HasSuffix(path, "timeline.bins")
	var sub []figure
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return err
		}
		if first && (k == "turn" || k == "isl_min" || k == "cause") {
			if s, ok := vt.(string); ok {
				name = fmt.Sprintf("%s[%s=%s]", path, k, s)
				first = false
				continue
			}
			if n, ok := vt.(json.Number); ok {
				name = fmt.Sprintf("%s[%s=%s]", path, k, n)
				first = false
				continue
			}
		}
		first = false
		if err := walkFrom(dec, vt, "\x00"+k, &sub); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if skipTimeline {
		return nil
	}
	for _, f := range sub {
		*out = append(*out, figure{name + "." + strings.TrimPrefix(f.path, "\x00"), f.v})
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
