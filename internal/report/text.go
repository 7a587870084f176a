package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/records"
)

// maxTurnRows is how many turns the text table and the plot list one by
// one; later turns share one row, so a 100-turn run still fits a terminal.
const maxTurnRows = 8

// foldTurns splits turns into those shown one by one and those folded into
// one row (none when folding would save no row).
func foldTurns(turns []TurnStats) (own, rest []TurnStats) {
	if len(turns) > maxTurnRows+1 {
		return turns[:maxTurnRows], turns[maxTurnRows:]
	}
	return turns, nil
}

// foldLabel names the row of folded turns.
func foldLabel(rest []TurnStats) string {
	return fmt.Sprintf("turns %d–%d", rest[0].Turn, rest[len(rest)-1].Turn)
}

// table is a block of the human summary, rendered as aligned text or HTML.
// The first column is a label (left-aligned), the others numbers.
type table struct {
	head []string
	rows [][]string
	note string // a line under the table
}

// WriteText writes the summary as a compact aligned table for humans.
func (s *Accumulator) WriteText(w io.Writer) error {
	r := s.Report()
	bw := bufio.NewWriter(w)
	for _, l := range r.headline() {
		fmt.Fprintln(bw, l)
	}
	if sh := r.Shards; sh != nil {
		fmt.Fprintln(bw)
		for _, l := range sh.lines() {
			fmt.Fprintln(bw, l)
		}
		sh.table().writeText(bw)
	}
	for _, t := range r.tables() {
		fmt.Fprintln(bw)
		t.writeText(bw)
	}
	if o := r.OSL; o != nil {
		fmt.Fprintln(bw)
		for _, l := range o.lines() {
			fmt.Fprintln(bw, l)
		}
	}
	if p := r.Performance; p != nil {
		fmt.Fprintln(bw)
		for _, l := range p.headline() {
			fmt.Fprintln(bw, l)
		}
		for _, t := range p.tables() {
			fmt.Fprintln(bw)
			t.writeText(bw)
		}
	}
	if len(r.Stages) > 0 {
		fmt.Fprintln(bw)
		stagesTable(r.Stages).writeText(bw)
		for _, l := range r.StageSLO.lines() {
			fmt.Fprintln(bw, l)
		}
	}
	return bw.Flush()
}

// headline is the lines above the tables: totals and failures.
func (r *Report) headline() []string {
	l := fmt.Sprintf("requests %d   counted: templated %d, bare %d", r.Requests, r.Counted.Templated, r.Counted.Bare)
	if r.TemplateErrors > 0 {
		l += fmt.Sprintf(" (template errors %d)", r.TemplateErrors)
	}
	l += fmt.Sprintf("   unreadable lines %d", r.UnreadableLines.Total)
	if r.UnreadableLines.Total > 0 {
		l += " (" + byKind(r.UnreadableLines.ByKind) + ")"
	}
	if r.WarmupExcluded > 0 {
		l += fmt.Sprintf("   warmup left out %d", r.WarmupExcluded)
	}
	if r.Chained > 0 {
		l += fmt.Sprintf("   chained %d (Responses previous_response_id: counted as the server reconstructs the conversation)", r.Chained)
	}
	lines := []string{}
	for _, run := range r.Runs {
		lines = append(lines, runLine(run))
	}
	lines = append(lines, l)
	if r.NoPayload > 0 {
		lines = append(lines, fmt.Sprintf("no payload: %d live records (send --no-payload) in the performance figures, their ISL not recounted", r.NoPayload))
	}
	if r.DuplicatesDropped > 0 {
		lines = append(lines, fmt.Sprintf("duplicates dropped: %d records identical to an earlier one (same request, same content)", r.DuplicatesDropped))
	}
	if len(r.Profiles) > 0 {
		lines = append(lines, "server profile: "+byKind(r.Profiles))
	}
	if len(r.Compared) > 0 {
		lines = append(lines, "compared with: "+byKind(r.Compared)+" (causes vs profile: counted − the other profile's count)")
	}
	if m := r.Media; m.Requests > 0 && m.Images-m.CountedImages+m.Audios+m.Videos > 0 {
		lines = append(lines, fmt.Sprintf("media: %d requests with images %d, audios %d, videos %d (not in templated counts)",
			m.Requests, m.Images-m.CountedImages, m.Audios, m.Videos))
	}
	if m := r.Media; m.CountedImages > 0 {
		lines = append(lines, fmt.Sprintf("images: %d counted, %d image tokens in the templated counts (%.1f per image)",
			m.CountedImages, m.ImageTokens, float64(m.ImageTokens)/float64(m.CountedImages)))
	}
	if r.PrefixCache != nil {
		lines = append(lines, r.PrefixCache.line())
	}
	if r.ServerCache != nil {
		lines = append(lines, r.ServerCache.lines()...)
	}
	if r.ModelMismatch != nil {
		lines = append(lines, r.ModelMismatch.line())
	}
	if r.ServerMetrics != nil {
		lines = append(lines, r.ServerMetrics.lines()...)
	}
	return lines
}

// byKind lists counts by kind, sorted by kind: "http_5xx 3, timeout 1".
func byKind(m map[string]uint64) string {
	kinds := slices.Sorted(maps.Keys(m))
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(kinds, ", ")
}

// tables builds the error table (totals, then per turn under each
// comparison) and the cause tables.
func (r *Report) tables() []table {
	errs := table{head: []string{"", "n", "exact", "bias", "mean|err|", "p50", "p99", "max", "range"}}
	for _, c := range []struct {
		label string
		total ErrorStats
		turn  func(TurnStats) ErrorStats
	}{
		{"vs target", r.VsTarget, func(t TurnStats) ErrorStats { return t.VsTarget }},
		{"vs expected", r.VsExpected, func(t TurnStats) ErrorStats { return t.VsExpected }},
		{"vs server", r.VsServer, func(t TurnStats) ErrorStats { return t.VsServer }},
	} {
		errs.rows = append(errs.rows, statsRow(c.label, c.total))
		var turns []TurnStats
		for _, t := range r.ByTurn {
			if c.turn(t).N > 0 {
				turns = append(turns, t)
			}
		}
		if len(turns) < 2 {
			continue // one turn: the total says it all
		}
		own, rest := foldTurns(turns)
		for _, t := range own {
			errs.rows = append(errs.rows, statsRow(fmt.Sprintf("  turn %d", t.Turn), c.turn(t)))
		}
		if rest != nil {
			errs.rows = append(errs.rows, statsRow("  "+foldLabel(rest), mergedStats(rest, c.turn)))
		}
	}
	errs.note = "error = counted − target, counted − expected, server − counted; bias = mean error; p50/p99/max: nearest-rank |error|"
	tabs := []table{errs}
	for _, g := range []struct {
		label string
		g     CauseGroup
	}{{"causes vs target", r.Causes.VsTarget}, {"causes vs server", r.Causes.VsServer}, {"causes vs profile", r.Causes.VsProfile}} {
		if len(g.g.Causes) == 0 {
			continue // no gap to explain
		}
		t := table{head: []string{fmt.Sprintf("%s (%d req)", g.label, g.g.Requests), "req", "tokens", "|tokens|"}}
		for _, c := range g.g.Causes {
			t.rows = append(t.rows, []string{"  " + c.Cause, fmt.Sprint(c.Requests), signed(c.Tokens), fmt.Sprint(c.AbsTokens)})
		}
		tabs = append(tabs, t)
	}
	return tabs
}

// mergedStats is the error statistics of several turns together.
func mergedStats(turns []TurnStats, pick func(TurnStats) ErrorStats) ErrorStats {
	all := hist{}
	for _, t := range turns {
		all.merge(pick(t).h)
	}
	return errorStats(all)
}

func (h hist) merge(o hist) {
	for v, n := range o {
		h[v] += n
	}
}

func statsRow(label string, st ErrorStats) []string {
	if st.N == 0 {
		return []string{label, "0", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"}
	}
	return []string{label, fmt.Sprint(st.N), pct(st.Exact, st.N),
		fmt.Sprintf("%+.2f", *st.MeanError), fmt.Sprintf("%.2f", *st.MeanAbsError),
		fmt.Sprint(*st.P50AbsError), fmt.Sprint(*st.P99AbsError), fmt.Sprint(*st.MaxAbsError),
		span(*st.MinError, *st.MaxError)}
}

// signed formats an error with its sign; zero has none.
func signed(v int64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%+d", v)
}

func span(lo, hi int64) string {
	if lo == hi {
		return signed(lo)
	}
	return signed(lo) + ".." + signed(hi)
}

// pct formats k/n with one decimal, but never rounds to 100.0% or 0.0%
// unless it is: "100.0%" must mean every request hit.
func pct(k, n uint64) string {
	p := 100 * float64(k) / float64(n)
	switch {
	case k == n:
		return "100.0%"
	case k == 0:
		return "0.0%"
	case p > 99.9:
		return "99.9%"
	case p < 0.1:
		return "0.1%"
	}
	return fmt.Sprintf("%.1f%%", math.Round(p*10)/10)
}

func (t table) writeText(w io.Writer) {
	width := make([]int, len(t.head))
	for _, row := range append([][]string{t.head}, t.rows...) {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range append([][]string{t.head}, t.rows...) {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if t.note != "" {
		fmt.Fprintln(w, t.note)
	}
}

// runLine is a run's configuration in one line.
func runLine(r records.Run) string {
	l := fmt.Sprintf("run: %s %s started %s: %s %s", r.Tool, r.Version, r.Started, r.Endpoint, r.URL)
	if r.Model != "" {
		l += ", model " + r.Model
	}
	l += fmt.Sprintf(", concurrency %d, rate %s", r.Concurrency, strconv.FormatFloat(r.Rate, 'f', -1, 64))
	if r.RateDistribution != "" {
		l += " (" + r.RateDistribution + ")"
	}
	l += fmt.Sprintf(", requests %d, conversations %d", r.Requests, r.Conversations)
	if r.Duration != "" {
		l += ", duration " + r.Duration
	}
	if r.Shard != "" {
		l += ", shard " + r.Shard
	}
	if st := r.Stages; st != nil {
		l += ", stages " + st.Spec
		if st.UntilSLO {
			l += " until " + st.SLO
		}
	}
	if !r.Stream {
		l += ", not streamed"
	}
	return l + "; command: send " + strings.Join(r.CommandLine, " ")
}
