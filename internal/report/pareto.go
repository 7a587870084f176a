package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The load curve's figures: the stages' table, the SLO line, and the
// Pareto plot (output tokens/s against TTFT and ITL, p50 and p99, one
// point per stage, with the SLO lines), for one sweep or two compared.

// TitleStages is the report's section of a staged run; the browser test
// looks for it.
const TitleStages = "Load stages"

// stagesTable is the stages' figures, one row each, by index.
func stagesTable(stages []StageReport) table {
	t := table{head: []string{"stage", "level", "req", "ok", "req/s", "out tok/s", "ttft p50", "ttft p99", "itl p50", "itl p99", "goodput", "slo", "client"},
		note: "per stage, over its own duration; ttft/itl in ms; goodput: fraction of the stage's requests meeting the SLO; " +
			"client_limited: missed while the client was saturated (not the server's limit)"}
	for _, s := range stages {
		good, verdict, client := "n/a", "", "ok"
		if s.Goodput != nil {
			good = pct(s.Goodput.Requests, max(s.Requests, 1))
			verdict = s.Verdict
		}
		if s.Client == nil {
			client = "n/a"
		} else if s.Client.Saturated {
			client = "saturated"
		}
		t.rows = append(t.rows, []string{fmt.Sprint(s.Index), s.LevelString(), fmt.Sprint(s.Requests), fmt.Sprint(s.Succeeded),
			fixed(s.RequestThroughput, 2), fixed(s.OutputTokenThroughput, 1), ms(s.TTFTP50Ms), ms(s.TTFTP99Ms), ms(s.ITLP50Ms), ms(s.ITLP99Ms),
			good, verdict, client})
	}
	return t
}

// lines say what the stages found about the SLO.
func (s *StageSLO) lines() []string {
	if s == nil {
		return nil
	}
	head := fmt.Sprintf("stages against the SLO (%s, at least %s of a stage's requests): ", s.SLO.String(), fixed(100*s.MinGoodput, 0)+"%")
	var l string
	switch {
	case s.Highest == nil:
		l = head + "no stage met it"
	case s.LowestMiss == nil:
		l = head + fmt.Sprintf("every stage met it, up to stage %d (%s)", s.Highest.Index, s.Highest.LevelString())
	default:
		l = head + fmt.Sprintf("the highest stage meeting it is stage %d (%s); the lowest missing it, stage %d (%s)",
			s.Highest.Index, s.Highest.LevelString(), s.LowestMiss.Index, s.LowestMiss.LevelString())
	}
	out := []string{l}
	if s.ClientLimited > 0 {
		out = append(out, fmt.Sprintf("%d stage(s) missed it while the client was saturated: not counted as the server's limit", s.ClientLimited))
	}
	return out
}

// sweep is one staged run's curve on the Pareto plot.
type sweep struct {
	name   string
	stages []StageReport
	slo    SLO
}

// Colours of a sweep's p50 and p99 points (the second sweep of a
// comparison gets the second pair).
var sweepColours = [][2]string{{colTTFT, "#0d3c61"}, {colE2E, "#7f3300"}}

// paretoCharts are two charts, TTFT and ITL against output tokens/s, each
// with a p50 and a p99 curve per sweep (points in level order, each an
// element with data-stage, data-sweep and data-figure for the browser
// test) and the SLO lines (TTFT; the TPOT objective on the ITL chart).
func paretoCharts(sweeps []sweep) []chart {
	ttft := chart{title: "TTFT against output tokens/s, one point per stage", xlabel: "output tokens/s", ylabel: "TTFT (ms)"}
	itl := chart{title: "ITL against output tokens/s, one point per stage", xlabel: "output tokens/s", ylabel: "ITL (ms)"}
	for _, c := range []*chart{&ttft, &itl} {
		c.xlo, c.ylo = 0, 0
	}
	drawn := false
	for k, sw := range sweeps {
		st := append([]StageReport(nil), sw.stages...)
		sort.SliceStable(st, func(i, j int) bool { return st[i].Level() < st[j].Level() })
		col := sweepColours[k%len(sweepColours)]
		for _, f := range []struct {
			c        *chart
			name     string
			p50, p99 func(StageReport) *float64
		}{
			{&ttft, "ttft", func(s StageReport) *float64 { return s.TTFTP50Ms }, func(s StageReport) *float64 { return s.TTFTP99Ms }},
			{&itl, "itl", func(s StageReport) *float64 { return s.ITLP50Ms }, func(s StageReport) *float64 { return s.ITLP99Ms }},
		} {
			for q, pick := range []func(StageReport) *float64{f.p50, f.p99} {
				pname := []string{"p50", "p99"}[q]
				label := pname
				if len(sweeps) > 1 {
					label = sw.name + " " + pname
				}
				line := series{kind: "line", colour: col[q], dashed: q == 1}
				mk := series{kind: "marker", colour: col[q], label: label, dashed: q == 1}
				for _, s := range st {
					v := pick(s)
					if v == nil {
						continue
					}
					drawn = true
					x := s.OutputTokenThroughput
					line.xs, line.ys = append(line.xs, x), append(line.ys, *v)
					mk.xs, mk.ys = append(mk.xs, x), append(mk.ys, *v)
					mk.attrs = append(mk.attrs, fmt.Sprintf(` data-sweep="%d" data-stage="%d" data-figure="%s_%s"`, k, s.Index, f.name, pname))
					f.c.xhi, f.c.yhi = max(f.c.xhi, x), max(f.c.yhi, *v)
				}
				if len(line.xs) > 1 {
					f.c.series = append(f.c.series, line)
				}
				f.c.series = append(f.c.series, mk)
			}
		}
	}
	if !drawn {
		ttft.empty, itl.empty = "no streamed request", "no streamed request"
		return []chart{ttft, itl}
	}
	var slo SLO
	for _, sw := range sweeps {
		if !sw.slo.empty() {
			slo = sw.slo
			break
		}
	}
	for _, l := range []struct {
		c     *chart
		v     *float64
		label string
	}{{&ttft, slo.TTFT, "SLO ttft"}, {&itl, slo.TPOT, "SLO tpot"}} {
		if l.v == nil {
			continue
		}
		l.c.yhi = max(l.c.yhi, *l.v)
		l.c.series = append(l.c.series, series{kind: "line", colour: colFail, dashed: true, label: l.label,
			xs: []float64{0, l.c.xhi * 1.05}, ys: []float64{*l.v, *l.v}})
	}
	for _, c := range []*chart{&ttft, &itl} {
		c.xhi *= 1.05
		c.yhi *= 1.1
	}
	return []chart{ttft, itl}
}

// writeStages is the report's section of a staged run.
func (r *Report) writeStages(w io.Writer) {
	if len(r.Stages) == 0 {
		return
	}
	fmt.Fprintf(w, "<h2>%s</h2>\n", TitleStages)
	for _, l := range r.StageSLO.lines() {
		fmt.Fprintf(w, "<p>%s</p>\n", esc(l))
	}
	writeHTMLTable(w, stagesTable(r.Stages))
	io.WriteString(w, `<p class="note">The Pareto plot: each point is a stage, at its output token throughput; solid p50, dashed p99; red dashed: the SLO.</p>`+"\n")
	var slo SLO
	if r.StageSLO != nil {
		slo = r.StageSLO.SLO
	}
	writeCharts(w, paretoCharts([]sweep{{name: "A", stages: r.Stages, slo: slo}}))
}

// sweepOf reads a --summary-json file's stages.
func sweepOf(name string, data []byte) (sweep, error) {
	var r struct {
		Stages   []StageReport `json:"stages"`
		StageSLO *StageSLO     `json:"stage_slo"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return sweep{}, fmt.Errorf("%s: %w", name, err)
	}
	sw := sweep{name: name, stages: r.Stages}
	if r.StageSLO != nil {
		sw.slo = r.StageSLO.SLO
	}
	return sw, nil
}

// ComparePage writes an HTML page of two summaries: their staged runs'
// Pareto plots on one (A and B in two colours) and the side-by-side
// figures of Compare (measure --compare A.json B.json --report FILE.html).
func ComparePage(w io.Writer, pathA, pathB string) error {
	var data [2][]byte
	var sweeps []sweep
	for i, p := range []string{pathA, pathB} {
		var err error
		if data[i], err = os.ReadFile(p); err != nil {
			return err
		}
		sw, err := sweepOf(p, data[i])
		if err != nil {
			return err
		}
		sw.name = []string{"A", "B"}[i]
		sweeps = append(sweeps, sw)
	}
	var text strings.Builder
	if err := Compare(&text, pathA, data[0], pathB, data[1]); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>islkit comparison</title>\n<style>\n"+pageStyle+"pre { font-size: 12px; }\n</style>\n</head>\n<body>\n", fontFace)
	fmt.Fprintf(bw, "<h1>islkit comparison</h1>\n<p>A = %s<br>B = %s</p>\n", esc(pathA), esc(pathB))
	fmt.Fprintf(bw, "<h2>%s</h2>\n", TitleStages)
	if len(sweeps[0].stages)+len(sweeps[1].stages) == 0 {
		io.WriteString(bw, "<p>Neither summary is of a staged run (send --stages): no curve to draw.</p>\n")
	} else {
		for _, sw := range sweeps {
			fmt.Fprintf(bw, "<p>%s: %s stages</p>\n", sw.name, strconv.Itoa(len(sw.stages)))
		}
		writeCharts(bw, paretoCharts(sweeps))
	}
	fmt.Fprintf(bw, "<h2>%s</h2>\n<pre>%s</pre>\n</body>\n</html>\n", TitleTables, esc(text.String()))
	return bw.Flush()
}
