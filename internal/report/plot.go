package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Plot geometry, in SVG user units (px).
const (
	panelW, panelH = 440.0, 110.0 // plot area of one histogram
	padL, padR     = 58.0, 18.0   // room for y tick labels
	padT, padB     = 24.0, 26.0   // panel caption above, x tick labels below
	titleH         = 74.0
	footH          = 34.0
	maxBins        = 60 // beyond this, integer errors share bins
	minSpan        = 5  // the x axis shows at least −minSpan..+minSpan
)

// Colours: a hit (error 0) is green whatever the comparison; misses take
// the column's colour; bars outside the shown range are grey.
const (
	colHit   = "#2e7d32"
	colOut   = "#9e9e9e"
	colGrid  = "#e0e0e0"
	colAxis  = "#424242"
	fontFace = "DejaVu Sans, Helvetica, Arial, sans-serif"
)

// WritePlot writes histograms of the signed errors (counted − target and
// server − counted), all requests and then per turn, as "svg" or as a
// self-contained "html" page holding the SVG and the summary tables.
func (s *Accumulator) WritePlot(w io.Writer, format string) error {
	r := s.Report()
	switch format {
	case "svg":
		bw := bufio.NewWriter(w)
		r.writeSVG(bw)
		return bw.Flush()
	case "html":
		bw := bufio.NewWriter(w)
		r.writeHTML(bw)
		return bw.Flush()
	}
	return fmt.Errorf("plot format %q: want svg or html", format)
}

// column is one comparison's histograms, sharing an x axis.
type column struct {
	title, xlabel, colour string
	rows                  []ErrorStats // parallel to the plot's row labels
	bins                  binning
}

// binning maps integer errors to bars: maxBins or fewer bins of width w
// from lo, plus an underflow and an overflow bar when outliers fall
// outside [lo, hi] (1st–99th percentile, 0 always inside).
type binning struct {
	lo, hi, w   int64 // hi = lo + n·w − 1
	n           int
	under, over bool
}

func (b binning) slots() int {
	n := b.n
	if b.under {
		n++
	}
	if b.over {
		n++
	}
	return n
}

// slot returns the bar index of v, counting the underflow bar as 0.
func (b binning) slot(v int64) int {
	off := 0
	if b.under {
		off = 1
	}
	v = clampPlot(v)
	switch {
	case v < b.lo:
		return 0
	case v > b.hi:
		return off + b.n
	}
	return off + int((v-b.lo)/b.w)
}

func newBinning(st ErrorStats) binning {
	minE, maxE := clampPlot(*st.MinError), clampPlot(*st.MaxError)
	// At least −5..+5, so a lone bar reads as a bar, not a block.
	lo, hi := min(minE, -minSpan), max(maxE, minSpan)
	if span := float64(hi) - float64(lo) + 1; span > maxBins {
		// Outliers would squeeze the bulk into one bar: show the central
		// 98% and put the tails in an under/overflow bar each.
		lo, hi = min(clampPlot(signedRank(st.h, st.N, 1)), -minSpan), max(clampPlot(signedRank(st.h, st.N, 99)), minSpan)
	}
	span := float64(hi) - float64(lo) + 1
	w := niceStep(math.Ceil(span / maxBins))
	blo := floorDiv(lo, w) * w
	n := int(floorDiv(hi, w) - floorDiv(lo, w) + 1)
	return binning{lo: blo, hi: blo + int64(n)*w - 1, w: w, n: n, under: minE < blo, over: maxE > blo+int64(n)*w-1}
}

// plotLimit bounds the errors the plot bins, so bin arithmetic cannot
// overflow; only saturated nonsense counts come near it.
const plotLimit = 1 << 62

func clampPlot(v int64) int64 { return min(max(v, -plotLimit), plotLimit) }

// signedRank is the nearest-rank p-th percentile of the signed errors.
func signedRank(h hist, n uint64, p uint64) int64 {
	vs := sortedKeys(h)
	k := max((p*n+99)/100, 1)
	var seen uint64
	for _, v := range vs {
		seen += h[v]
		if seen >= k {
			return v
		}
	}
	return vs[len(vs)-1]
}

func sortedKeys(h hist) []int64 {
	vs := make([]int64, 0, len(h))
	for v := range h {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	return vs
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// niceStep rounds x ≥ 1 up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) int64 {
	if x <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			if v := m * p; v < math.MaxInt64/2 {
				return int64(v)
			}
		}
	}
	return math.MaxInt64 / 2
}

// layout picks the columns and row labels of the plot.
func (r *Report) layout() ([]column, []string) {
	labels := []string{"all requests"}
	var own, rest []TurnStats
	if len(r.ByTurn) > 1 {
		own, rest = foldTurns(r.ByTurn)
		for _, t := range own {
			labels = append(labels, fmt.Sprintf("turn %d", t.Turn))
		}
		if rest != nil {
			labels = append(labels, foldLabel(rest))
		}
	}
	var cols []column
	for _, c := range []struct {
		title, xlabel, colour string
		total                 ErrorStats
		pick                  func(TurnStats) ErrorStats
	}{
		{"counted − target", "counted − target (tokens)", "#1f77b4", r.VsTarget, func(t TurnStats) ErrorStats { return t.VsTarget }},
		{"server − counted", "server − counted (tokens)", "#d95f02", r.VsServer, func(t TurnStats) ErrorStats { return t.VsServer }},
	} {
		if c.total.N == 0 {
			continue
		}
		col := column{title: c.title, xlabel: c.xlabel, colour: c.colour, rows: []ErrorStats{c.total}, bins: newBinning(c.total)}
		for _, t := range own {
			col.rows = append(col.rows, c.pick(t))
		}
		if rest != nil {
			col.rows = append(col.rows, mergedStats(rest, c.pick))
		}
		cols = append(cols, col)
	}
	return cols, labels
}

// svgw accumulates SVG text; coordinates get one decimal so output is
// byte-stable across platforms.
type svgw struct{ b strings.Builder }

func (s *svgw) f(format string, a ...any) { fmt.Fprintf(&s.b, format, a...) }

func n1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func esc(s string) string { return html.EscapeString(s) }

func (s *svgw) text(x, y float64, anchor, size, attrs, txt string) {
	s.f(`<text x="%s" y="%s" text-anchor="%s" font-size="%s"%s>%s</text>`+"\n", n1(x), n1(y), anchor, size, attrs, esc(txt))
}

func (r *Report) writeSVG(w io.Writer) {
	cols, labels := r.layout()
	colW := padL + panelW + padR
	rowH := padT + panelH + padB
	ncol := max(len(cols), 1)
	width := 16 + float64(ncol)*colW + 8
	nrows := len(labels)
	if len(cols) == 0 {
		nrows = 1
	}
	height := titleH + float64(nrows)*rowH + footH
	s := &svgw{}
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s">`+"\n",
		n1(width), n1(height), n1(width), n1(height), fontFace)
	s.f(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	s.text(16, 26, "start", "18", ` font-weight="bold"`, "ISL error histogram by turn")
	sub := fmt.Sprintf("%d requests · counted templated %d, bare %d · unreadable lines %d",
		r.Requests, r.Counted.Templated, r.Counted.Bare, r.UnreadableLines.Total)
	if p := r.Performance; p != nil {
		sub += fmt.Sprintf(" · failed requests %d", p.Failed+p.Cancelled)
		if len(p.Errors) > 0 {
			sub += " (" + byKind(p.Errors) + ")"
		}
	}
	s.text(16, 46, "start", "12", ` fill="#555"`, sub)
	// Legend.
	lx := 16.0
	legend := []struct{ c, t string }{{colHit, "exact (error 0)"}}
	for _, c := range cols {
		legend = append(legend, struct{ c, t string }{c.colour, c.title + " ≠ 0"})
	}
	legend = append(legend, struct{ c, t string }{colOut, "outside shown range"})
	for _, l := range legend {
		s.f(`<rect x="%s" y="56" width="10" height="10" fill="%s"/>`+"\n", n1(lx), l.c)
		s.text(lx+14, 65, "start", "11", "", l.t)
		lx += 14 + float64(len([]rune(l.t)))*6.2 + 18
	}
	if len(cols) == 0 {
		s.text(width/2, titleH+rowH/2, "middle", "14", ` fill="#555"`, "no data: no request had a target or a server count")
	}
	for ci, c := range cols {
		x0 := 16 + float64(ci)*colW + padL
		for ri := range labels {
			y0 := titleH + float64(ri)*rowH + padT
			s.panel(c, c.rows[ri], labels[ri], x0, y0)
		}
		ybot := titleH + float64(nrows)*rowH
		s.text(x0+panelW/2, ybot+12, "middle", "12", ` font-weight="bold"`, c.xlabel)
		s.text(x0-44, titleH+float64(nrows)*rowH/2, "middle", "12",
			fmt.Sprintf(` transform="rotate(-90 %s %s)"`, n1(x0-44), n1(titleH+float64(nrows)*rowH/2)), "requests (log scale)")
	}
	s.f("</svg>\n")
	io.WriteString(w, s.b.String())
}

// panel draws one histogram with its plot area at (x0, y0).
func (s *svgw) panel(c column, st ErrorStats, label string, x0, y0 float64) {
	caption := label + " · n/a"
	if st.N > 0 {
		caption = fmt.Sprintf("%s · n=%d · exact %s · mean|err| %s · max %s", label, st.N, pct(st.Exact, st.N),
			meanLabel(*st.MeanAbsError), compactInt(*st.MaxAbsError))
	}
	s.text(x0, y0-8, "start", "11.5", "", caption)
	s.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="#fafafa" stroke="%s" stroke-width="0.5"/>`+"\n",
		n1(x0), n1(y0), n1(panelW), n1(panelH), colGrid)
	b := c.bins
	slots := b.slots()
	counts := make([]uint64, slots)
	for v, n := range st.h {
		counts[b.slot(v)] += n
	}
	var top uint64
	for _, n := range counts {
		top = max(top, n)
	}
	// Log scale: the bulk is usually exact, and a linear axis would hide
	// the few misses this plot exists to show. Top is the power of ten
	// above the tallest bar.
	decades := math.Floor(math.Log10(float64(max(top, 1)))) + 1
	yOf := func(n float64) float64 { return y0 + panelH - math.Log10(1+n)/decades*panelH }
	for d := 0.0; d <= decades; d++ {
		v := math.Pow(10, d)
		if d == 0 {
			v = 0
		}
		y := yOf(v)
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="0.5"/>`+"\n", n1(x0), n1(y), n1(x0+panelW), n1(y), colGrid)
		s.text(x0-4, y+4, "end", "10", ` fill="#555"`, compact(v))
	}
	sw := panelW / float64(slots)
	gap := math.Min(1, sw*0.15)
	off := 0
	if b.under {
		off = 1
	}
	// Zero line (under the bars), so a hit is findable even when 0
	// shares a wide bin.
	z := b.slot(0)
	zStart := b.lo + int64(z-off)*b.w
	zx := x0 + (float64(z)+(float64(-zStart)+0.5)/float64(b.w))*sw
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1" stroke-dasharray="3 2"/>`+"\n",
		n1(zx), n1(y0), n1(zx), n1(y0+panelH), colAxis)
	labelCounts := slots <= 24 // room for a number over each bar
	for i, n := range counts {
		if n == 0 {
			continue
		}
		colour := c.colour
		switch {
		case b.under && i == 0, b.over && i == slots-1:
			colour = colOut
		case b.w == 1 && i == z:
			colour = colHit
		}
		y := yOf(float64(n))
		x := x0 + float64(i)*sw + gap/2
		s.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %d</title></rect>`+"\n",
			n1(x), n1(y), n1(sw-gap), n1(y0+panelH-y), colour, esc(b.slotLabel(i)), n)
		if labelCounts {
			s.text(x+(sw-gap)/2, y-3, "middle", "9.5", ` fill="#333" stroke="#fafafa" stroke-width="3" paint-order="stroke"`, compact(float64(n)))
		}
	}
	// x axis, ticks chosen by binning.ticks.
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n1(x0), n1(y0+panelH), n1(x0+panelW), n1(y0+panelH), colAxis)
	for _, i := range b.ticks() {
		x := x0 + (float64(i)+0.5)*sw
		if b.w > 1 && !(b.under && i == 0) && !(b.over && i == slots-1) {
			x = x0 + float64(i)*sw // a wide bin's tick marks its start
		}
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", n1(x), n1(y0+panelH), n1(x), n1(y0+panelH+4), colAxis)
		s.text(x, y0+panelH+15, "middle", "10", "", b.tickLabel(i))
	}
}

// slotLabel names a bar by its errors: "-3", "10..19", "<-40", ">120".
func (b binning) slotLabel(i int) string {
	off := 0
	if b.under {
		off = 1
	}
	switch {
	case b.under && i == 0:
		return "<" + compactInt(b.lo)
	case b.over && i == b.slots()-1:
		return ">" + compactInt(b.hi)
	}
	lo := b.lo + int64(i-off)*b.w
	if b.w == 1 {
		return compactInt(lo)
	}
	return compactInt(lo) + ".." + compactInt(lo+b.w-1)
}

// tickLabel is slotLabel without the end of a wide bin: the axis reads
// as continuous, and the bar tooltips give the full range.
func (b binning) tickLabel(i int) string {
	l := b.slotLabel(i)
	if j := strings.Index(l, ".."); j > 0 {
		return l[:j]
	}
	return l
}

// ticks returns the bars to label: the outlier bars and the zero bar
// first, then bars at a round stride, skipping any label that would
// collide with one already placed (≈ 6.6 px per character).
func (b binning) ticks() []int {
	off := 0
	if b.under {
		off = 1
	}
	stride := niceStep(float64(b.n) / 8)
	want := []int{b.slot(0)}
	if b.under {
		want = append(want, 0)
	}
	if b.over {
		want = append(want, b.slots()-1)
	}
	for k := 0; k < b.n; k++ {
		if (b.lo/b.w+int64(k))%stride == 0 {
			want = append(want, off+k)
		}
	}
	sw := panelW / float64(b.slots())
	type span struct{ l, r float64 }
	var placed []span
	var out []int
next:
	for _, i := range want {
		half := float64(len(b.tickLabel(i)))*3.3 + 3
		c := (float64(i) + 0.5) * sw
		if b.w > 1 {
			c = float64(i) * sw
		}
		for _, p := range placed {
			if c+half > p.l && c-half < p.r {
				continue next
			}
		}
		placed = append(placed, span{c - half, c + half})
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// compact formats a count or error briefly: 950, 12k, 3.4M.
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e12:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1e9:
		return trimZero(v/1e9) + "G"
	case a >= 1e6:
		return trimZero(v/1e6) + "M"
	case a >= 1e4:
		return trimZero(v/1e3) + "k"
	}
	return trimZero(v)
}

func meanLabel(v float64) string {
	if math.Abs(v) >= 1e4 {
		return compact(v)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func compactInt(v int64) string {
	if v > -10000 && v < 10000 {
		return strconv.FormatInt(v, 10)
	}
	return compact(float64(v))
}

func trimZero(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func (r *Report) writeHTML(w io.Writer) {
	fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>islkit ISL summary</title>
<style>
body { font-family: %s; margin: 24px; color: #212121; }
h1 { font-size: 20px; }
table { border-collapse: collapse; margin: 12px 0 20px; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e0e0e0; }
th { text-align: right; background: #f5f5f5; }
td { text-align: right; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { text-align: left; white-space: pre; }
p.note { font-size: 12px; color: #555; }
</style>
</head>
<body>
<h1>islkit ISL summary</h1>
`, fontFace)
	for _, l := range r.headline() {
		fmt.Fprintf(w, "<p>%s</p>\n", esc(l))
	}
	r.writeSVG(w)
	for _, t := range r.tables() {
		io.WriteString(w, "<table>\n<tr>")
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
	io.WriteString(w, "</body>\n</html>\n")
}
