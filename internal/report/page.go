package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// WriteReport writes the whole summary as one self-contained HTML page
// (measure --report): key figures, latency CDFs, TTFT against ISL,
// throughput and concurrency over time, the ISL error histograms, and
// every table of the text summary. Figures are inline SVG; the page uses
// no script, no external resource.
func (s *Accumulator) WriteReport(w io.Writer) error {
	r := s.Report()
	bw := bufio.NewWriter(w)
	r.writeReport(bw)
	return bw.Flush()
}

// Figure titles, in page order; the browser test looks for them.
const (
	TitleKeyFigures = "Key figures"
	TitleShards     = "Shards"
	TitleCDF        = "Latency CDFs"
	TitleTTFTvsISL  = "TTFT against ISL"
	TitleThroughput = "Throughput over time"
	TitleConcurrent = "Concurrency over time"
	TitleISLErrors  = "ISL error histograms"
	TitleTables     = "Tables"
)

const pageStyle = `body { font-family: %s; margin: 24px; color: #212121; max-width: 1100px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; border-bottom: 1px solid #e0e0e0; padding-bottom: 3px; }
p { margin: 4px 0; font-size: 14px; white-space: pre-wrap; }
p.note { font-size: 12px; color: #555; }
p.bad { color: #b71c1c; font-weight: bold; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e0e0e0; }
th { text-align: right; background: #f5f5f5; }
td { text-align: right; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { text-align: left; white-space: pre; }
table.key td:first-child { font-weight: bold; }
svg { display: block; margin: 6px 0; max-width: 100%%; height: auto; }
`

func (r *Report) writeReport(w io.Writer) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>islkit benchmark report</title>\n<style>\n"+pageStyle+"</style>\n</head>\n<body>\n", fontFace)
	io.WriteString(w, "<h1>islkit benchmark report</h1>\n")
	p := r.Performance
	lines := r.headline()
	if p != nil {
		lines = append(lines, p.headline()...)
	} else {
		lines = append(lines, "dry run (or no live records): no performance section")
	}
	for _, l := range lines {
		class := ""
		if p != nil && strings.HasPrefix(l, "performance:") && p.Failed+p.Cancelled > 0 {
			class = ` class="bad"`
		}
		fmt.Fprintf(w, "<p%s>%s</p>\n", class, esc(l))
	}
	if sh := r.Shards; sh != nil {
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleShards)
		for i, l := range sh.lines() {
			class := ""
			if i >= 2 { // the problems
				class = ` class="bad"`
			}
			fmt.Fprintf(w, "<p%s>%s</p>\n", class, esc(l))
		}
		writeHTMLTable(w, sh.table())
	}
	if r.OSL != nil {
		r.OSL.writeHTML(w)
	}
	if p != nil {
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleKeyFigures)
		writeHTMLTable(w, p.keyTable())
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleCDF)
		io.WriteString(w, `<p class="note">Fraction of requests (of chunk gaps, for ITL) at or below each latency; dashed lines: p50 and p99.</p>`+"\n")
		p.writeCDFs(w)
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleTTFTvsISL)
		p.writeScatter(w)
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleThroughput)
		p.writeThroughput(w)
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleConcurrent)
		p.writeConcurrency(w)
		r.writeStages(w)
	}
	if m := r.ServerMetrics; m != nil {
		fmt.Fprintf(w, "<h2>%s</h2>\n", TitleServerMetrics)
		m.writeHTML(w, p)
	}
	fmt.Fprintf(w, "<h2>%s</h2>\n", TitleISLErrors)
	r.writeSVG(w)
	fmt.Fprintf(w, "<h2>%s</h2>\n", TitleTables)
	tabs := r.tables()
	if p != nil {
		tabs = append(p.tables(), tabs...)
	}
	for _, t := range tabs {
		writeHTMLTable(w, t)
	}
	io.WriteString(w, "</body>\n</html>\n")
}

// keyTable is the figures a reader looks for first.
func (p *Performance) keyTable() table {
	t := table{head: []string{"figure", "value"}}
	add := func(k, v string) { t.rows = append(t.rows, []string{k, v}) }
	add("requests", fmt.Sprintf("%d (succeeded %d, failed %d, cancelled %d)", p.Requests, p.Succeeded, p.Failed, p.Cancelled))
	if len(p.Errors) > 0 {
		add("errors by kind", byKind(p.Errors))
	}
	add("duration", fixed(p.DurationS, 3)+" s")
	add("request throughput", fixed(p.RequestThroughput, 2)+" req/s")
	add("output token throughput", fixed(p.OutputTokenThroughput, 1)+" tok/s")
	add("total token throughput", fixed(p.TotalTokenThroughput, 1)+" tok/s")
	add("concurrency", fmt.Sprintf("peak %d, mean %s", p.PeakConcurrency, fixed(p.MeanConcurrency, 2)))
	for _, f := range []struct {
		k  string
		st Stats
	}{{"TTFT", p.TTFT}, {"TPOT", p.TPOT}, {"ITL", p.ITL}, {"E2E latency", p.E2E}} {
		add(f.k+" p50 / p99", ms(f.st.Get(50))+" / "+ms(f.st.Get(99))+" ms")
	}
	if g := p.Goodput; g != nil {
		add("goodput ("+g.SLO.String()+")", fmt.Sprintf("%d requests, %s req/s, %s of requests", g.Requests, fixed(g.RequestThroughput, 2), pct(g.Requests, max(p.Requests, 1))))
	}
	if p.ScheduleLag != nil {
		add("schedule lag p50 / p99", ms(p.ScheduleLag.Get(50))+" / "+ms(p.ScheduleLag.Get(99))+" ms")
	}
	if w := p.Client.Warning(); w != "" {
		add("client", w)
	}
	if n := p.Client.Note(); n != "" {
		add("client note", n)
	}
	return t
}

func writeHTMLTable(w io.Writer, t table) {
	class := ""
	if len(t.head) == 2 && t.head[0] == "figure" {
		class = ` class="key"`
	}
	fmt.Fprintf(w, "<table%s>\n<tr>", class)
	for _, h := range t.head {
		fmt.Fprintf(w, "<th>%s</th>", esc(h))
	}
	io.WriteString(w, "</tr>\n")
	for _, row := range t.rows {
		io.WriteString(w, "<tr>")
		for _, c := range row {
			fmt.Fprintf(w, "<td>%s</td>", esc(c))
		}
		io.WriteString(w, "</tr>\n")
	}
	io.WriteString(w, "</table>\n")
	if t.note != "" {
		fmt.Fprintf(w, "<p class=\"note\">%s</p>\n", esc(t.note))
	}
}

// chart is one x/y panel: axes with round ticks, and its series.
type chart struct {
	title, xlabel, ylabel string
	xlo, xhi, ylo, yhi    float64
	series                []series
	empty                 string // shown instead of series when set
}

type series struct {
	label, colour string
	kind          string // "line", "step" (a CDF), "points", "cross", "marker" (a point per stage)
	xs, ys        []float64
	dashed        bool
	// attrs are each marker's extra attributes (data-stage, …).
	attrs []string
}

// Panel geometry of a chart.
const (
	chartW, chartH   = 470.0, 230.0
	chartL, chartR   = 62.0, 16.0
	chartT, chartB   = 42.0, 44.0
	chartPlotW       = chartW - chartL - chartR
	chartPlotH       = chartH - chartT - chartB
	colTTFT, colTPOT = "#1f77b4", "#2ca02c"
	colITL, colE2E   = "#9467bd", "#d95f02"
	colFail          = "#c62828"
)

// writeCharts lays charts out two per row in one SVG.
func writeCharts(w io.Writer, charts []chart) {
	cols := min(len(charts), 2)
	rows := (len(charts) + 1) / 2
	width, height := float64(cols)*chartW, float64(rows)*chartH
	s := &svgw{}
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s">`+"\n",
		n1(width), n1(height), n1(width), n1(height), fontFace)
	s.f(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	for i, c := range charts {
		s.chart(c, float64(i%2)*chartW, float64(i/2)*chartH)
	}
	s.f("</svg>\n")
	io.WriteString(w, s.b.String())
}

func (s *svgw) chart(c chart, ox, oy float64) {
	x0, y0 := ox+chartL, oy+chartT
	s.text(x0, oy+18, "start", "13", ` font-weight="bold"`, c.title)
	s.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="#fafafa" stroke="%s" stroke-width="0.5"/>`+"\n",
		n1(x0), n1(y0), n1(chartPlotW), n1(chartPlotH), colGrid)
	if c.empty != "" {
		s.text(x0+chartPlotW/2, y0+chartPlotH/2, "middle", "12", ` fill="#555"`, c.empty)
		return
	}
	if c.xhi <= c.xlo {
		c.xhi = c.xlo + 1
	}
	if c.yhi <= c.ylo {
		c.yhi = c.ylo + 1
	}
	xt, yt := niceTicks(c.xlo, c.xhi, 6), niceTicks(c.ylo, c.yhi, 5)
	c.xlo, c.xhi = min(c.xlo, xt[0]), max(c.xhi, xt[len(xt)-1])
	c.ylo, c.yhi = min(c.ylo, yt[0]), max(c.yhi, yt[len(yt)-1])
	X := func(v float64) float64 { return x0 + (v-c.xlo)/(c.xhi-c.xlo)*chartPlotW }
	Y := func(v float64) float64 { return y0 + chartPlotH - (v-c.ylo)/(c.yhi-c.ylo)*chartPlotH }
	for _, v := range yt {
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="0.5"/>`+"\n", n1(x0), n1(Y(v)), n1(x0+chartPlotW), n1(Y(v)), colGrid)
		s.text(x0-4, Y(v)+4, "end", "10", ` fill="#555"`, tickLabel(v))
	}
	for _, v := range xt {
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n1(X(v)), n1(y0+chartPlotH), n1(X(v)), n1(y0+chartPlotH+4), colAxis)
		s.text(X(v), y0+chartPlotH+15, "middle", "10", "", tickLabel(v))
	}
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n1(x0), n1(y0+chartPlotH), n1(x0+chartPlotW), n1(y0+chartPlotH), colAxis)
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n1(x0), n1(y0), n1(x0), n1(y0+chartPlotH), colAxis)
	s.text(x0+chartPlotW/2, y0+chartPlotH+32, "middle", "11", "", c.xlabel)
	ly := y0 + chartPlotH/2
	s.text(ox+14, ly, "middle", "11", fmt.Sprintf(` transform="rotate(-90 %s %s)"`, n1(ox+14), n1(ly)), c.ylabel)
	legendX := x0 + chartPlotW
	for i := len(c.series) - 1; i >= 0; i-- {
		sr := c.series[i]
		if sr.label == "" {
			continue
		}
		wdt := float64(len([]rune(sr.label)))*5.8 + 16
		legendX -= wdt
		s.f(`<rect x="%s" y="%s" width="9" height="9" fill="%s"/>`+"\n", n1(legendX), n1(oy+24), sr.colour)
		s.text(legendX+12, oy+32, "start", "10", "", sr.label)
	}
	for _, sr := range c.series {
		var pts strings.Builder
		switch sr.kind {
		case "marker":
			for i := range sr.xs {
				attrs := ""
				if i < len(sr.attrs) {
					attrs = sr.attrs[i]
				}
				fill := sr.colour
				if sr.dashed {
					fill = "#ffffff"
				}
				s.f(`<circle cx="%s" cy="%s" r="4" fill="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", n1(X(sr.xs[i])), n1(Y(min(max(sr.ys[i], c.ylo), c.yhi))), fill, sr.colour, attrs)
			}
			continue
		case "points", "cross":
			for i := range sr.xs {
				x, y := X(sr.xs[i]), Y(min(max(sr.ys[i], c.ylo), c.yhi))
				if sr.kind == "cross" {
					s.f(`<path d="M%s %sl5 5m0 -5l-5 5" stroke="%s" stroke-width="1.2"/>`+"\n", n1(x-2.5), n1(y-2.5), sr.colour)
				} else {
					s.f(`<circle cx="%s" cy="%s" r="2" fill="%s" fill-opacity="0.55"/>`+"\n", n1(x), n1(y), sr.colour)
				}
			}
			continue
		case "step":
			for i := range sr.xs {
				if i == 0 {
					fmt.Fprintf(&pts, "%s,%s ", n1(X(sr.xs[0])), n1(Y(0)))
				} else {
					fmt.Fprintf(&pts, "%s,%s ", n1(X(sr.xs[i])), n1(Y(sr.ys[i-1])))
				}
				fmt.Fprintf(&pts, "%s,%s ", n1(X(sr.xs[i])), n1(Y(sr.ys[i])))
			}
		default:
			for i := range sr.xs {
				fmt.Fprintf(&pts, "%s,%s ", n1(X(sr.xs[i])), n1(Y(sr.ys[i])))
			}
		}
		dash := ""
		if sr.dashed {
			dash = ` stroke-dasharray="4 3"`
		}
		s.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="1.6"%s/>`+"\n", strings.TrimSpace(pts.String()), sr.colour, dash)
	}
}

// niceTicks returns round tick values covering [lo, hi], about n of them.
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * p
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for v := start; v <= hi+step*0.999; v += step {
		out = append(out, math.Round(v/step)*step)
		if len(out) > 4*n {
			break
		}
	}
	return out
}

func tickLabel(v float64) string {
	if v == math.Trunc(v) {
		return compact(v)
	}
	return strings.TrimRight(strings.TrimRight(fixed(v, 3), "0"), ".")
}

// cdfPoints thins sorted values to at most 400 steps (quantiles), keeping
// the first and last.
func cdfPoints(vs []float64) ([]float64, []float64) {
	n := len(vs)
	step := max(1, n/400)
	var xs, ys []float64
	for i := 0; i < n; i += step {
		xs, ys = append(xs, vs[i]), append(ys, float64(i+1)/float64(n))
	}
	if xs[len(xs)-1] != vs[n-1] || ys[len(ys)-1] != 1 {
		xs, ys = append(xs, vs[n-1]), append(ys, 1)
	}
	return xs, ys
}

func (p *Performance) writeCDFs(w io.Writer) {
	var charts []chart
	for i, f := range []struct {
		name, colour string
		st           Stats
	}{{"TTFT", colTTFT, p.TTFT}, {"TPOT", colTPOT, p.TPOT}, {"ITL", colITL, p.ITL}, {"E2E latency", colE2E, p.E2E}} {
		vs := p.values[i]
		c := chart{title: fmt.Sprintf("%s CDF (n=%d)", f.name, f.st.N), xlabel: f.name + " (ms)", ylabel: "fraction ≤ x", ylo: 0, yhi: 1}
		if len(vs) == 0 {
			c.empty = "no data"
			charts = append(charts, c)
			continue
		}
		c.xlo, c.xhi = 0, vs[len(vs)-1]
		xs, ys := cdfPoints(vs)
		c.series = append(c.series, series{kind: "step", colour: f.colour, xs: xs, ys: ys})
		for _, q := range []float64{50, 99} {
			if v := f.st.Get(q); v != nil {
				c.series = append(c.series, series{kind: "line", colour: "#757575", dashed: true,
					xs: []float64{*v, *v}, ys: []float64{0, 1}})
			}
		}
		c.series[len(c.series)-1].label = "p50, p99"
		charts = append(charts, c)
	}
	writeCharts(w, charts)
}

// maxScatter bounds the points drawn; beyond it every k-th request is.
const maxScatter = 4000

func (p *Performance) writeScatter(w io.Writer) {
	c := chart{title: "TTFT against ISL, one point per request", xlabel: "ISL (reported count, tokens)", ylabel: "TTFT (ms)"}
	ok := series{kind: "points", colour: colTTFT, label: "succeeded"}
	fail := series{kind: "cross", colour: colFail, label: "failed (drawn at 0)"}
	step := max(1, len(p.points)/maxScatter)
	first := true
	for i := 0; i < len(p.points); i += step {
		pt := p.points[i]
		x, y := float64(pt.isl), pt.ms
		if pt.fail {
			y = 0 // no TTFT; the axis keeps the scale of the successes
		}
		if first {
			c.xlo, c.xhi, c.ylo, c.yhi = x, x, 0, y
			first = false
		}
		c.xlo, c.xhi, c.yhi = min(c.xlo, x), max(c.xhi, x), max(c.yhi, y)
		if pt.fail {
			fail.xs, fail.ys = append(fail.xs, x), append(fail.ys, y)
		} else {
			ok.xs, ok.ys = append(ok.xs, x), append(ok.ys, y)
		}
	}
	if first {
		c.empty = "no data"
	}
	if c.xhi == c.xlo {
		c.xlo, c.xhi = c.xlo-1, c.xhi+1
	}
	c.series = []series{ok}
	if len(fail.xs) > 0 {
		c.series = append(c.series, fail)
	}
	if step > 1 {
		c.title += fmt.Sprintf(", every %dth", step)
	}
	writeCharts(w, []chart{c})
}

func (p *Performance) writeThroughput(w io.Writer) {
	tl := p.Timeline
	tok := chart{title: "Output tokens/s per " + binLabel(tl.BinS) + " bin", xlabel: "time since first request (s)", ylabel: "tokens/s"}
	req := chart{title: "Requests ending per second (" + binLabel(tl.BinS) + " bins)", xlabel: "time since first request (s)", ylabel: "requests/s"}
	if len(tl.Bins) == 0 {
		tok.empty, req.empty = "no data", "no data"
		writeCharts(w, []chart{tok, req})
		return
	}
	t := series{kind: "line", colour: colE2E, label: "output tokens/s"}
	okS := series{kind: "line", colour: colTPOT, label: "succeeded"}
	failS := series{kind: "line", colour: colFail, label: "failed"}
	anyFail := false
	for _, b := range tl.Bins {
		mid := b.StartS + tl.BinS/2
		t.xs, t.ys = append(t.xs, mid), append(t.ys, b.OutputTokenThroughput)
		okS.xs, okS.ys = append(okS.xs, mid), append(okS.ys, float64(b.Completed)/tl.BinS)
		failS.xs, failS.ys = append(failS.xs, mid), append(failS.ys, float64(b.Failed)/tl.BinS)
		tok.yhi = max(tok.yhi, b.OutputTokenThroughput)
		req.yhi = max(req.yhi, float64(b.Completed+b.Failed)/tl.BinS, float64(b.Completed)/tl.BinS)
		anyFail = anyFail || b.Failed > 0
	}
	tok.xhi, req.xhi = p.DurationS, p.DurationS
	tok.series = []series{t}
	req.series = []series{okS}
	if anyFail {
		req.series = append(req.series, failS)
	}
	writeCharts(w, []chart{tok, req})
}

func (p *Performance) writeConcurrency(w io.Writer) {
	tl := p.Timeline
	c := chart{title: fmt.Sprintf("Requests in flight (mean per %s bin; peak %d)", binLabel(tl.BinS), p.PeakConcurrency),
		xlabel: "time since first request (s)", ylabel: "requests in flight"}
	if len(tl.Bins) == 0 {
		c.empty = "no data"
		writeCharts(w, []chart{c})
		return
	}
	sr := series{kind: "line", colour: colTTFT, label: "in flight"}
	for _, b := range tl.Bins {
		sr.xs, sr.ys = append(sr.xs, b.StartS+tl.BinS/2), append(sr.ys, b.Concurrency)
	}
	c.xhi, c.yhi = p.DurationS, float64(max(p.PeakConcurrency, 1))
	c.series = []series{sr}
	writeCharts(w, []chart{c})
}

// binLabel names a bin width: "50 ms", "2 s".
func binLabel(sec float64) string {
	if sec < 1 {
		return strconv.FormatFloat(sec*1000, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(sec, 'f', -1, 64) + " s"
}
