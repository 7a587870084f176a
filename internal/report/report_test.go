package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/ golden files")

func ip(v int) *int { return &v }

// rec is a templated record with the given counts; nil pointers stay nil.
func rec(counted int, target, server *int, turn *int) records.ISL {
	return records.ISL{Bare: ip(counted - 10), Templated: ip(counted), Counted: "templated", Target: target, Server: server, TurnIndex: turn}
}

// validate marshals s and checks it against the schema.
func validate(t *testing.T, s *Accumulator) []byte {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	return data
}

func eqI(t *testing.T, name string, got *int64, want int64) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %d", name, deref(got), want)
	}
}

func eqF(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-12 {
		t.Errorf("%s = %v, want %v", name, deref(got), want)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// Errors [0, 0, 1, −3] by hand: 2 exact of 4; mean signed (0+0+1−3)/4 =
// −0.5; mean |err| 4/4 = 1; sorted |err| 0 0 1 3: p50 rank ⌈2⌉ = 2 → 0,
// p99 rank ⌈3.96⌉ = 4 → 3; max 3.
func TestHandComputed(t *testing.T) {
	s := NewAccumulator()
	for _, e := range []int{0, 0, 1, -3} {
		s.Add(rec(1000+e, ip(1000), nil, nil))
	}
	r := s.Report()
	st := r.VsTarget
	if st.N != 4 || st.Exact != 2 {
		t.Fatalf("n=%d exact=%d, want 4 and 2", st.N, st.Exact)
	}
	eqF(t, "exact_pct", st.ExactPct, 50)
	eqF(t, "mean_error", st.MeanError, -0.5)
	eqF(t, "mean_abs_error", st.MeanAbsError, 1)
	eqI(t, "p50", st.P50AbsError, 0)
	eqI(t, "p99", st.P99AbsError, 3)
	eqI(t, "max", st.MaxAbsError, 3)
	eqI(t, "min_error", st.MinError, -3)
	eqI(t, "max_error", st.MaxError, 1)
	if r.VsServer.N != 0 || r.VsServer.ExactPct != nil || r.VsServer.P50AbsError != nil {
		t.Errorf("vs_server without server counts: %+v, want n=0 and nulls", r.VsServer)
	}
	if r.Counted != (Counted{Templated: 4}) || r.Requests != 4 {
		t.Errorf("counted %+v requests %d", r.Counted, r.Requests)
	}
	validate(t, s)
}

// Nearest rank over |err| 1..100: p50 is the 50th value, p99 the 99th;
// over 1..200: ranks ⌈100⌉ and ⌈198⌉. Over one value, every percentile is it.
func TestNearestRank(t *testing.T) {
	for _, c := range []struct {
		n             int
		p50, p99, max int64
	}{{1, 1, 1, 1}, {100, 50, 99, 100}, {200, 100, 198, 200}, {101, 51, 100, 101}} {
		s := NewAccumulator()
		for i := 1; i <= c.n; i++ {
			s.Add(rec(1000-i, ip(1000), nil, nil)) // negative errors: |·| ranks
		}
		st := s.Report().VsTarget
		eqI(t, "p50", st.P50AbsError, c.p50)
		eqI(t, "p99", st.P99AbsError, c.p99)
		eqI(t, "max", st.MaxAbsError, c.max)
	}
}

// Which count is reported, and the sign of each comparison.
func TestReportedCountAndSigns(t *testing.T) {
	s := NewAccumulator()
	// Templated 105 reported: vs target +5, vs expected +1, vs server 107−105 = +2.
	s.Add(records.ISL{Bare: ip(100), Templated: ip(105), Counted: "templated", Target: ip(100), Expected: ip(104), Server: ip(107)})
	// Counted bare though templated is known: 100 reported, error 0.
	s.Add(records.ISL{Bare: ip(100), Templated: ip(105), Counted: "bare", Target: ip(100)})
	// Template error: counted bare.
	s.Add(records.ISL{Bare: ip(98), Counted: "bare", TemplateError: "boom", Target: ip(100)})
	// Says templated but has no templated count: falls back to bare.
	s.Add(records.ISL{Bare: ip(100), Counted: "templated", Target: ip(100)})
	r := s.Report()
	if r.Counted != (Counted{Templated: 1, Bare: 3}) || r.TemplateErrors != 1 {
		t.Errorf("counted %+v template_errors %d", r.Counted, r.TemplateErrors)
	}
	if r.VsTarget.N != 4 || r.VsTarget.Exact != 2 {
		t.Errorf("vs target n=%d exact=%d, want 4, 2", r.VsTarget.N, r.VsTarget.Exact)
	}
	eqI(t, "vs target min", r.VsTarget.MinError, -2)
	eqI(t, "vs target max", r.VsTarget.MaxError, 5)
	eqF(t, "vs target mean", r.VsTarget.MeanError, 0.75)
	eqI(t, "vs expected", r.VsExpected.MaxError, 1)
	eqI(t, "vs server", r.VsServer.MaxError, 2)
	if r.VsExpected.N != 1 || r.VsServer.N != 1 {
		t.Errorf("expected n=%d server n=%d, want 1, 1", r.VsExpected.N, r.VsServer.N)
	}
	validate(t, s)
}

func TestOnlyBare(t *testing.T) {
	s := NewAccumulator()
	for i := range 3 {
		s.Add(records.ISL{Bare: ip(50 + i), Counted: "bare", Target: ip(50)})
	}
	r := s.Report()
	if r.Counted != (Counted{Bare: 3}) {
		t.Errorf("counted %+v, want bare 3", r.Counted)
	}
	eqF(t, "mean_abs_error", r.VsTarget.MeanAbsError, 1)
	eqI(t, "p50", r.VsTarget.P50AbsError, 1)
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "counted: templated 0, bare 3") {
		t.Errorf("text:\n%s", buf.String())
	}
	validate(t, s)
}

func TestByTurnAndCauses(t *testing.T) {
	s := NewAccumulator()
	// Turn 0: errors 0, 0 vs target; turn 1: +2, −1; one without a turn.
	gap := func(cs ...records.Cause) *records.Gap { return &records.Gap{Causes: cs} }
	a := rec(100, ip(100), ip(101), ip(0))
	a.VsServer = gap(records.Cause{Cause: records.CauseDoubledBOS, Tokens: 1})
	s.Add(a)
	s.Add(rec(200, ip(200), ip(200), ip(0)))
	b := rec(302, ip(300), ip(303), ip(1))
	b.VsTarget = gap(records.Cause{Cause: records.CauseBoundary, Tokens: 3}, records.Cause{Cause: records.CauseContent, Tokens: -1},
		records.Cause{Cause: records.CauseMarker, Tokens: 0})
	b.VsServer = gap(records.Cause{Cause: records.CauseDoubledBOS, Tokens: 1})
	s.Add(b)
	c := rec(399, ip(400), nil, ip(1))
	c.VsTarget = gap(records.Cause{Cause: records.CauseBoundary, Tokens: -1})
	s.Add(c)
	s.Add(rec(500, ip(500), nil, nil))
	r := s.Report()
	if len(r.ByTurn) != 2 || r.RequestsWithoutTurn != 1 {
		t.Fatalf("by_turn %d entries, %d without turn", len(r.ByTurn), r.RequestsWithoutTurn)
	}
	t0, t1 := r.ByTurn[0], r.ByTurn[1]
	if t0.Turn != 0 || t0.Requests != 2 || t0.VsTarget.Exact != 2 || t0.VsServer.N != 2 || t0.VsServer.Exact != 1 {
		t.Errorf("turn 0: %+v", t0)
	}
	if t1.Turn != 1 || t1.Requests != 2 || t1.VsTarget.Exact != 0 || t1.VsServer.N != 1 {
		t.Errorf("turn 1: %+v", t1)
	}
	eqF(t, "turn 1 mean|err|", t1.VsTarget.MeanAbsError, 1.5)
	eqF(t, "turn 1 mean", t1.VsTarget.MeanError, 0.5)
	eqI(t, "turn 1 max", t1.VsTarget.MaxAbsError, 2)
	if r.VsTarget.N != 5 {
		t.Errorf("total includes the record without a turn: n=%d", r.VsTarget.N)
	}
	want := Causes{
		VsTarget: CauseGroup{Requests: 2, Causes: []CauseStats{
			{Cause: records.CauseBoundary, Requests: 2, Tokens: 2, AbsTokens: 4},
			{Cause: records.CauseContent, Requests: 1, Tokens: -1, AbsTokens: 1},
		}},
		VsServer:  CauseGroup{Requests: 2, Causes: []CauseStats{{Cause: records.CauseDoubledBOS, Requests: 2, Tokens: 2, AbsTokens: 2}}},
		VsProfile: CauseGroup{Causes: []CauseStats{}},
	}
	gotJ, _ := json.Marshal(r.Causes)
	wantJ, _ := json.Marshal(want)
	if !bytes.Equal(gotJ, wantJ) {
		t.Errorf("causes\n got %s\nwant %s", gotJ, wantJ)
	}
	validate(t, s)
}

func TestUnreadableLinesAndMedia(t *testing.T) {
	s := NewAccumulator()
	s.AddUnreadable("bad_json")
	s.AddUnreadable("bad_json")
	s.AddUnreadable("unknown_shape")
	s.AddUnreadable("")
	s.Add(records.ISL{Bare: ip(10), Counted: "bare", Media: &records.Media{Images: 2, Videos: 1}})
	s.Add(records.ISL{Bare: ip(10), Counted: "bare", Media: &records.Media{}})
	r := s.Report()
	if r.UnreadableLines.Total != 4 || r.UnreadableLines.ByKind["bad_json"] != 2 || r.UnreadableLines.ByKind["unknown"] != 1 {
		t.Errorf("unreadable lines %+v", r.UnreadableLines)
	}
	if r.Media != (Media{Requests: 1, Images: 2, Videos: 1}) {
		t.Errorf("media %+v", r.Media)
	}
	var buf bytes.Buffer
	s.WriteText(&buf)
	for _, want := range []string{"unreadable lines 4 (bad_json 2, unknown 1, unknown_shape 1)", "media: 1 requests with images 2"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	validate(t, s)
}

func TestEmpty(t *testing.T) {
	s := NewAccumulator()
	data := validate(t, s)
	if !bytes.Contains(data, []byte(`"by_turn":[]`)) || !bytes.Contains(data, []byte(`"p50_abs_error":null`)) {
		t.Errorf("empty JSON: %s", data)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "vs server    0    n/a   n/a        n/a  n/a  n/a  n/a    n/a\n") {
		t.Errorf("text:\n%s", buf.String())
	}
	for _, f := range []string{"svg", "html"} {
		buf.Reset()
		if err := s.WritePlot(&buf, f); err != nil || !strings.Contains(buf.String(), "no data") {
			t.Errorf("%s plot of nothing: %v\n%s", f, err, buf.String())
		}
	}
}

// Huge counts stay exact; counts at the int limits saturate rather than
// wrap into small wrong errors.
func TestHugeCounts(t *testing.T) {
	s := NewAccumulator()
	big := 1 << 40
	s.Add(rec(big+7, ip(big), ip(big+7), nil))
	s.Add(rec(big-7, ip(big), ip(big-7), nil))
	r := s.Report()
	eqF(t, "mean|err|", r.VsTarget.MeanAbsError, 7)
	eqF(t, "mean", r.VsTarget.MeanError, 0)
	eqI(t, "max", r.VsTarget.MaxAbsError, 7)
	validate(t, s)

	s = NewAccumulator()
	s.Add(records.ISL{Bare: ip(math.MaxInt), Counted: "bare", Target: ip(math.MinInt), Server: ip(math.MinInt)})
	r = s.Report()
	eqI(t, "saturated max", r.VsTarget.MaxError, math.MaxInt64)
	eqI(t, "saturated min", r.VsServer.MinError, math.MinInt64)
	eqI(t, "|min int|", r.VsServer.MaxAbsError, math.MaxInt64)
	validate(t, s)
	for _, f := range []string{"svg", "html"} {
		if err := s.WritePlot(&bytes.Buffer{}, f); err != nil {
			t.Error(err)
		}
	}
	if err := s.WriteText(&bytes.Buffer{}); err != nil {
		t.Error(err)
	}
}

// A million records with few distinct errors keep a handful of buckets.
func TestMemoryBounded(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	s := NewAccumulator()
	for i := range n {
		s.Add(rec(1000+i%5-2, ip(1000), nil, ip(i%3)))
	}
	if len(s.all[0]) != 5 || len(s.turns) != 3 {
		t.Errorf("%d buckets, %d turns; want 5 and 3", len(s.all[0]), len(s.turns))
	}
	st := s.Report().VsTarget
	if st.N != uint64(n) {
		t.Errorf("n = %d", st.N)
	}
	eqF(t, "mean|err|", st.MeanAbsError, 1.2) // |−2|+|−1|+0+1+2 over 5
	eqI(t, "p50", st.P50AbsError, 1)
	eqI(t, "p99", st.P99AbsError, 2)
}

func TestPct(t *testing.T) {
	for _, c := range []struct {
		k, n uint64
		want string
	}{{1, 1, "100.0%"}, {0, 5, "0.0%"}, {9999, 10000, "99.9%"}, {1, 10000, "0.1%"}, {2, 3, "66.7%"}, {1, 8, "12.5%"}} {
		if got := pct(c.k, c.n); got != c.want {
			t.Errorf("pct(%d, %d) = %s, want %s", c.k, c.n, got, c.want)
		}
	}
}

func TestBinning(t *testing.T) {
	s := NewAccumulator()
	// 200 exact, errors −1..+3, one outlier at +5000 and one at −900.
	for range 200 {
		s.Add(rec(100, ip(100), nil, nil))
	}
	for e := -1; e <= 3; e++ {
		s.Add(rec(100+e, ip(100), nil, nil))
	}
	s.Add(rec(5100, ip(100), nil, nil))
	s.Add(rec(-800, ip(100), nil, nil))
	b := newBinning(s.Report().VsTarget)
	want := binning{lo: -5, hi: 5, w: 1, n: 11, under: true, over: true}
	if b != want {
		t.Errorf("binning %+v, want %+v", b, want)
	}
	if b.slot(-900) != 0 || b.slot(5000) != 12 || b.slot(0) != 6 || b.slotLabel(0) != "<-5" || b.slotLabel(12) != ">5" {
		t.Errorf("slots: %d %d %d %q %q", b.slot(-900), b.slot(5000), b.slot(0), b.slotLabel(0), b.slotLabel(12))
	}
	// A wide bulk, errors −300, −297, …, +300 (201 values): 1st–99th
	// percentile by nearest rank is ranks 3 and 199, −294..+294; 589
	// values over 60 bins → width 10, aligned: −300..299, so +300 overflows.
	s = NewAccumulator()
	for e := -300; e <= 300; e += 3 {
		s.Add(rec(1000+e, ip(1000), nil, nil))
	}
	b = newBinning(s.Report().VsTarget)
	if want := (binning{lo: -300, hi: 299, w: 10, n: 60, over: true}); b != want {
		t.Errorf("wide binning %+v, want %+v", b, want)
	}
	if floorDiv(-7, 5) != -2 || floorDiv(7, 5) != 1 || floorDiv(-10, 5) != -2 {
		t.Error("floorDiv")
	}
}

func TestWritePlotFormat(t *testing.T) {
	if err := NewAccumulator().WritePlot(&bytes.Buffer{}, "png"); err == nil {
		t.Error("png: want an error")
	}
}

// sample is a run with every feature the outputs show: several turns,
// misses and outliers, server counts, causes, failures, a template error.
func sample() *Accumulator {
	s := NewAccumulator()
	for i := range 600 {
		turn := i % 3
		e := 0
		if i%5 == 0 {
			e = (i%7 - 3) * (turn + 1)
		}
		if i == 300 {
			e = 250
		}
		isl := rec(2000+e, ip(2000), ip(2000+e+i%4/3), ip(turn))
		isl.Expected = ip(2000 + e)
		isl.ConversationID = "c"
		if e != 0 {
			isl.VsTarget = &records.Gap{Total: e, Causes: []records.Cause{{Cause: records.CauseBoundary, Tokens: e}}}
		}
		if i%4 == 3 {
			isl.VsServer = &records.Gap{Total: 1, Causes: []records.Cause{{Cause: records.CauseDoubledBOS, Tokens: 1}}}
		}
		isl.Profile = "vllm"
		if i%10 == 0 {
			// --compare-server aiperf: vLLM's "\n" join and parsed tool-call
			// arguments cost more than AIPerf's count.
			n := 2000 + e - 3
			isl.VsProfile = &records.ProfileGap{Profile: "aiperf", Count: &n, Gap: &records.Gap{Total: 3,
				Causes: []records.Cause{{Cause: records.CausePartJoin, Tokens: 2}, {Cause: records.CauseToolCallArgs, Tokens: 1}}}}
		}
		if i == 7 {
			isl.Templated, isl.Counted, isl.TemplateError = nil, "bare", "template raised"
			isl.Target = ip(*isl.Bare)
		}
		s.Add(isl)
	}
	s.AddUnreadable("bad_json")
	return s
}

func TestGolden(t *testing.T) {
	s := sample()
	validate(t, s)
	for _, c := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"summary.txt", func(b *bytes.Buffer) error { return s.WriteText(b) }},
		{"summary.json", func(b *bytes.Buffer) error {
			data, err := json.MarshalIndent(s, "", "  ")
			b.Write(append(data, '\n'))
			return err
		}},
	} {
		var got, again bytes.Buffer
		if err := c.write(&got); err != nil {
			t.Fatal(err)
		}
		c.write(&again)
		if !bytes.Equal(got.Bytes(), again.Bytes()) {
			t.Errorf("%s: two writes differ (map order leaking)", c.file)
		}
		path := filepath.Join("testdata", c.file)
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s differs from golden; rerun with -update and review the diff", c.file)
		}
	}
}

// The plot is checked by what it must show rather than byte by byte: well
// formed, deterministic, every request counted once per row it belongs to,
// and the HTML page holding the same SVG and the text tables.
func TestPlot(t *testing.T) {
	s := sample()
	var svg, again, html bytes.Buffer
	if err := s.WritePlot(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	s.WritePlot(&again, "svg")
	if !bytes.Equal(svg.Bytes(), again.Bytes()) {
		t.Error("two SVG writes differ (map order leaking)")
	}
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	bars := 0
	inTitle := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inTitle = tok.Name.Local == "title"
		case xml.EndElement:
			inTitle = false
		case xml.CharData:
			if inTitle { // a bar's tooltip, "VALUE: COUNT"
				_, n, ok := strings.Cut(string(tok), ": ")
				c, err := strconv.Atoi(n)
				if !ok || err != nil {
					t.Fatalf("bar title %q", tok)
				}
				bars += c
			}
		}
	}
	// 600 requests, all with a target and a server count: two columns
	// (counted − target, server − counted), each with the all-requests row
	// and one row per turn.
	if bars != 2*2*600 {
		t.Errorf("bars hold %d requests, want 2400", bars)
	}
	if err := s.WritePlot(&html, "html"); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	headline, _, _ := strings.Cut(text.String(), "\n")
	if !bytes.Contains(html.Bytes(), svg.Bytes()) || !strings.Contains(html.String(), "<table") ||
		!strings.Contains(html.String(), strings.TrimSpace(headline)) {
		t.Errorf("the HTML page lacks the SVG, the tables or the headline %q", headline)
	}
}

// Many turns: the text and the plot list the first maxTurnRows turns and
// fold the rest into one row.
func TestManyTurns(t *testing.T) {
	s := NewAccumulator()
	for turn := range 20 {
		s.Add(rec(100+turn%2, ip(100), nil, ip(turn)))
	}
	var buf bytes.Buffer
	s.WriteText(&buf)
	if !strings.Contains(buf.String(), "  turns 8–19  12") || strings.Contains(buf.String(), "turn 9 ") {
		t.Errorf("text:\n%s", buf.String())
	}
	cols, labels := func() ([]column, []string) { r := s.Report(); return r.layout() }()
	if len(labels) != maxTurnRows+2 || len(cols) != 1 || len(cols[0].rows) != len(labels) || cols[0].rows[len(labels)-1].N != 12 {
		t.Errorf("layout: %d labels %q, %d cols", len(labels), labels, len(cols))
	}
	if err := s.WritePlot(&bytes.Buffer{}, "svg"); err != nil {
		t.Error(err)
	}
	// maxTurnRows+1 turns: folding would save no row, so neither folds.
	s = NewAccumulator()
	for turn := range maxTurnRows + 1 {
		s.Add(rec(100, ip(100), nil, ip(turn)))
	}
	buf.Reset()
	s.WriteText(&buf)
	if strings.Contains(buf.String(), "turns ") || !strings.Contains(buf.String(), "  turn 8 ") {
		t.Errorf("text with %d turns:\n%s", maxTurnRows+1, buf.String())
	}
	r := s.Report()
	if _, labels := r.layout(); len(labels) != maxTurnRows+2 || labels[len(labels)-1] != "turn 8" {
		t.Errorf("plot labels with %d turns: %q", maxTurnRows+1, labels)
	}
}
