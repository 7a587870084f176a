package report

import (
	"fmt"
	"strconv"
)

// perfHeadline is the lines that open the performance section: counts,
// failures by kind, throughput, concurrency, goodput.
func (p *Performance) headline() []string {
	l := fmt.Sprintf("performance: requests %d   succeeded %d   failed %d", p.Requests, p.Succeeded, p.Failed)
	if len(p.Errors) > 0 {
		l += " (" + byKind(p.Errors) + ")"
	}
	l += fmt.Sprintf("   cancelled %d", p.Cancelled)
	if p.Retried > 0 {
		l += fmt.Sprintf("   retried %d", p.Retried)
	}
	lines := []string{l,
		fmt.Sprintf("duration %s s   throughput %s req/s, output %s tok/s, total %s tok/s   concurrency peak %d, mean %s",
			fixed(p.DurationS, 3), fixed(p.RequestThroughput, 2), fixed(p.OutputTokenThroughput, 1), fixed(p.TotalTokenThroughput, 1),
			p.PeakConcurrency, fixed(p.MeanConcurrency, 2)),
	}
	if p.Goodput != nil {
		g := p.Goodput
		lines = append(lines, fmt.Sprintf("goodput (%s): %d requests (%s of requests), %s req/s",
			g.SLO.String(), g.Requests, pct(g.Requests, max(p.Requests, 1)), fixed(g.RequestThroughput, 2)))
	}
	if w := p.Client.Warning(); w != "" {
		lines = append(lines, "WARNING: "+w)
	}
	if n := p.Client.Note(); n != "" {
		lines = append(lines, "note: "+n)
	}
	if p.OutputCounted > 0 {
		lines = append(lines, fmt.Sprintf("output tokens counted by islkit: %d requests had no server usage (their streamed text counted with measure's tokenizer)", p.OutputCounted))
	}
	if p.WithoutUsage > 0 {
		lines = append(lines, fmt.Sprintf("%d succeeded requests had no usage: no tokens or TPOT counted for them", p.WithoutUsage))
	}
	if p.Succeeded > p.Streamed {
		lines = append(lines, fmt.Sprintf("%d succeeded requests were not streamed (or had no output chunk): in e2e, not in ttft, tpot and itl", p.Succeeded-p.Streamed))
	}
	return lines
}

func fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// ms formats a latency in milliseconds; n/a when there is none.
func ms(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fixed(*v, 2)
}

// tables are the latency table and the breakdowns by turn and ISL.
func (p *Performance) tables() []table {
	head := []string{"latency (ms)", "n", "mean", "std", "min"}
	for _, q := range p.TTFT.Percentiles {
		head = append(head, q.Key())
	}
	head = append(head, "max")
	lat := table{head: head, note: "ttft: succeeded streamed requests; e2e: every succeeded request; tpot = (e2e − ttft) / (completion_tokens − 1) when > 1 token; " +
		"itl: every gap between output chunks, pooled; percentiles interpolate linearly between closest ranks (numpy)"}
	rows := []struct {
		label string
		st    Stats
	}{{"ttft", p.TTFT}, {"tpot", p.TPOT}, {"itl", p.ITL}, {"e2e", p.E2E}}
	if p.ScheduleLag != nil {
		rows = append(rows, struct {
			label string
			st    Stats
		}{"schedule lag", *p.ScheduleLag})
	}
	for _, r := range rows {
		row := []string{r.label, fmt.Sprint(r.st.N), ms(r.st.Mean), ms(r.st.Std), ms(r.st.Min)}
		for _, q := range r.st.Percentiles {
			row = append(row, ms(q.Value))
		}
		lat.rows = append(lat.rows, append(row, ms(r.st.Max)))
	}
	tabs := []table{lat}
	groupHead := func(first string) []string {
		return []string{first, "req", "ok", "failed", "ttft p50", "ttft p99", "tpot p50", "itl p50", "e2e p50", "e2e p99"}
	}
	groupRow := func(label string, g PerfGroup) []string {
		return []string{label, fmt.Sprint(g.Requests), fmt.Sprint(g.Succeeded), fmt.Sprint(g.Failed),
			ms(g.TTFT.Get(50)), ms(g.TTFT.Get(99)), ms(g.TPOT.Get(50)), ms(g.ITL.Get(50)), ms(g.E2E.Get(50)), ms(g.E2E.Get(99))}
	}
	if len(p.ByTurn) > 1 {
		t := table{head: groupHead("by turn")}
		own := p.ByTurn
		if p.turnFold != nil {
			own = p.ByTurn[:maxTurnRows]
		}
		for _, g := range own {
			t.rows = append(t.rows, groupRow(fmt.Sprintf("  turn %d", *g.Turn), g))
		}
		if f := p.turnFold; f != nil {
			t.rows = append(t.rows, groupRow(fmt.Sprintf("  turns %d–%d", *p.ByTurn[maxTurnRows].Turn, *p.ByTurn[len(p.ByTurn)-1].Turn), *f))
		}
		tabs = append(tabs, t)
	}
	if len(p.ByISL) > 1 {
		t := table{head: groupHead("by ISL")}
		for _, g := range p.ByISL {
			t.rows = append(t.rows, groupRow(fmt.Sprintf("  %d–%d", *g.ISLMin, *g.ISLMax), g))
		}
		tabs = append(tabs, t)
	}
	return tabs
}
