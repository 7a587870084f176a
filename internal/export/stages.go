package export

import (
	"cmp"
	"slices"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
)

// StageFigures is the per-stage table: the requests grouped by their
// stage (records.Request.Stage; those without one form one group, last),
// each group summarised by a report.Accumulator of its own with the run's
// options, so a stage's figures are the summary's definitions over its
// requests. A group without a live request has no row.
//
// This is the one place the table's figures come from: where report.Report
// carries per-stage figures itself, read them here instead.
func StageFigures(reqs []stagedRequest, opts report.Options) []StageRow {
	type group struct {
		stage *records.Stage
		acc   *report.Accumulator
	}
	byIndex := map[int]*group{}
	var unstaged *group
	for _, r := range reqs {
		g := unstaged
		if r.stage != nil {
			g = byIndex[r.stage.Index]
		}
		if g == nil {
			g = &group{stage: r.stage, acc: report.NewAccumulatorWith(opts)}
			if r.stage != nil {
				byIndex[r.stage.Index] = g
			} else {
				unstaged = g
			}
		}
		g.acc.AddRequest(r.req)
	}
	groups := make([]*group, 0, len(byIndex)+1)
	for _, g := range byIndex {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *group) int { return cmp.Compare(a.stage.Index, b.stage.Index) })
	if unstaged != nil {
		groups = append(groups, unstaged)
	}
	var rows []StageRow
	for _, g := range groups {
		rep := g.acc.Report()
		p := rep.Performance
		if p == nil {
			continue
		}
		row := StageRow{
			Requests: int64(p.Requests), Succeeded: int64(p.Succeeded), Failed: int64(p.Failed), Cancelled: int64(p.Cancelled),
			DurationS: p.DurationS, InputTokens: int64(p.InputTokens), OutputTokens: int64(p.OutputTokens),
			RequestThroughput: p.RequestThroughput, OutputTokenThroughput: p.OutputTokenThroughput, TotalTokenThroughput: p.TotalTokenThroughput,
			PeakConcurrency: int64(p.PeakConcurrency), MeanConcurrency: p.MeanConcurrency,
			TTFTMeanMs: p.TTFT.Mean, TTFTP50Ms: p.TTFT.Get(50), TTFTP90Ms: p.TTFT.Get(90), TTFTP99Ms: p.TTFT.Get(99),
			TPOTMeanMs: p.TPOT.Mean, TPOTP50Ms: p.TPOT.Get(50), TPOTP99Ms: p.TPOT.Get(99),
			ITLMeanMs: p.ITL.Mean, ITLP50Ms: p.ITL.Get(50), ITLP99Ms: p.ITL.Get(99),
			E2EMeanMs: p.E2E.Mean, E2EP50Ms: p.E2E.Get(50), E2EP90Ms: p.E2E.Get(90), E2EP99Ms: p.E2E.Get(99),
		}
		if s := g.stage; s != nil {
			row.StageIndex = ptr(int64(s.Index))
			if s.Concurrency != 0 {
				row.Concurrency = ptr(int64(s.Concurrency))
			}
			if s.Rate != 0 {
				row.Rate = ptr(s.Rate)
			}
		}
		if gp := p.Goodput; gp != nil {
			row.GoodputRequests = ptr(int64(gp.Requests))
			row.GoodputThroughput, row.GoodputFraction = ptr(gp.RequestThroughput), ptr(gp.Fraction)
		}
		if c := p.Client; c != nil {
			row.ClientSaturated = ptr(c.Saturated)
		}
		// The summary's verdict on the stage against the SLO (its
		// per-stage figures are these, over the same requests).
		if len(rep.Stages) == 1 {
			row.SLOVerdict = str(rep.Stages[0].Verdict)
		}
		rows = append(rows, row)
	}
	return rows
}
