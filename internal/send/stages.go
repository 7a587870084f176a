package send

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send/pace"
)

// StagePlan is a staged run (send --stages): its load levels one after
// another, each for Duration or Requests (whichever ends first), a
// Cooldown of silence between two, the warmup (Config.Warmup) at the
// start of each. With UntilSLO the levels rise until a stage's goodput
// fraction (report's, over SLO) falls below MinGoodput, then the search
// halves the interval between the last level that met it and that one
// down to Resolution (pace.Search). Each stage goes on with the dataset
// where the one before stopped (pass after pass), so no stage resends a
// request the server has cached.
type StagePlan struct {
	Spec       string // --stages as given (the run record's)
	Levels     pace.Levels
	Duration   time.Duration
	Requests   int
	Cooldown   time.Duration
	UntilSLO   bool
	SLO        report.SLO
	MinGoodput float64 // 0: report.DefaultMinGoodput
	Resolution float64 // 0: 1 (a session, or a request per second)
}

func (p *StagePlan) minGoodput() float64 {
	if p.MinGoodput == 0 {
		return report.DefaultMinGoodput
	}
	return p.MinGoodput
}

// resolution is --slo-resolution, 1 when not given (concurrency bisects
// whole numbers: never below 1).
func (p *StagePlan) resolution() float64 {
	if p.Resolution == 0 || p.Levels.Kind == pace.StageConcurrency && p.Resolution < 1 {
		return 1
	}
	return p.Resolution
}

// check refuses a plan the run cannot follow (nil: no stages).
func (p *StagePlan) check(o *Config) error {
	if p == nil {
		return nil
	}
	switch {
	case len(p.Levels.Values) == 0:
		return errors.New("--stages: no level")
	case p.Duration <= 0 && p.Requests <= 0:
		return errors.New("--stages: give each stage a length: --stage-duration D or --stage-requests N")
	case p.Duration < 0 || p.Requests < 0:
		return errors.New("--stage-duration and --stage-requests: want > 0")
	case p.Cooldown < 0:
		return fmt.Errorf("--stage-cooldown %v: want >= 0", p.Cooldown)
	case o.Requests > 0 || o.Duration > 0:
		return errors.New("--stages: each stage's length is --stage-requests or --stage-duration: drop --requests and --duration")
	case o.Schedule != ScheduleNone:
		return errors.New("--stages sets the load: drop --schedule timestamps")
	case p.Levels.Kind == pace.StageConcurrency && o.Concurrency > 0:
		return errors.New("--stages concurrency:… sets --concurrency per stage: drop --concurrency")
	case p.Levels.Kind == pace.StageRate && o.Rate > 0:
		return errors.New("--stages rate:… sets --rate per stage: drop --rate")
	case p.Levels.Kind == pace.StageConcurrency && o.Rate > 0:
		return errors.New("--stages concurrency:… with --rate: a stage is one load level; use --stages rate:… (with --concurrency to cap the sessions in flight)")
	case p.Resolution < 0:
		return fmt.Errorf("--slo-resolution %v: want > 0", p.Resolution)
	case !p.UntilSLO && p.Resolution > 0:
		return errors.New("--slo-resolution is the search of --until-slo: add it")
	}
	if p.MinGoodput != 0 {
		if err := report.CheckMinGoodput(p.MinGoodput); err != nil {
			return err
		}
	}
	if p.UntilSLO {
		if p.SLO == (report.SLO{}) {
			return errors.New("--until-slo stops at the first stage that misses the SLO: give it with --slo (e.g. --slo ttft=200ms)")
		}
		if !p.Levels.Increasing() {
			return errors.New("--until-slo needs rising levels in --stages (each above the one before)")
		}
	}
	return nil
}

// stages runs the plan's stages: their figures, and what --until-slo
// found (nil without it).
func (r *runner) stages(ctx context.Context, o Config) ([]report.StageReport, *pace.Result) {
	p := o.Stages
	search := pace.NewSearch(p.Levels, p.UntilSLO, p.resolution())
	var out []report.StageReport
	var from int64
	over := func() bool { return ctx.Err() != nil || r.gaveUp.Load() || r.err() != nil }
	for i := 0; ; i++ {
		level, ok := search.Next()
		if !ok {
			break
		}
		if i > 0 && !coolDown(ctx, p.Cooldown) || over() {
			break
		}
		so := o
		stage := &records.Stage{Index: i}
		if p.Levels.Kind == pace.StageConcurrency {
			so.Concurrency, stage.Concurrency = int(level), int(level)
		} else {
			so.Rate, stage.Rate = level, level
		}
		so.Requests, so.Duration = p.Requests, p.Duration
		acc := report.NewAccumulatorWith(report.Options{SLO: p.SLO, Client: o.ClientLimits, MinGoodput: p.MinGoodput})
		r.rec.setStage(acc)
		next, err := r.level(ctx, so, stage, from)
		r.rec.setStage(nil)
		// A sample at each stage's end closes its window: the server's
		// counters per stage, not only over the run.
		r.scrape.stageEnd(ctx, stage)
		from = next
		if err != nil {
			r.fail(err, false)
			break
		}
		sr := report.StageReport{Index: i, Concurrency: stage.Concurrency, Rate: stage.Rate}
		if st := acc.Report().Stages; len(st) == 1 {
			sr = st[0]
		}
		out = append(out, sr)
		if r.wr.StageDone != nil {
			r.wr.StageDone(sr)
		}
		if over() {
			break // a stage cut short says nothing of its level
		}
		switch sr.Verdict {
		case report.StageMeets:
			search.Record(pace.Meets)
		case report.StageMisses:
			search.Record(pace.Misses)
		case report.StageClientLimited:
			search.Record(pace.ClientLimited)
		}
	}
	if !p.UntilSLO {
		return out, nil
	}
	res := search.Result()
	return out, &res
}

// coolDown waits d between two stages; false when the run was stopped.
func coolDown(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// liveOf is a result as the summary reads it (what measure reads of a
// record's "result").
func liveOf(res *records.Result) *report.Live {
	l := &report.Live{StartNs: res.StartNs, LatencyNs: res.LatencyNs, TTFTNs: res.TTFTNs, ITLNs: res.ITLNs,
		OK: res.OK, Stream: res.Stream, Retried: res.Retried, Usage: res.Usage,
		ScheduleLagNs: res.ScheduleLagNs, SizingNs: res.SizingNs, QueueNs: res.QueueNs, ClientCPU: res.ClientCPU}
	if res.Error != nil {
		l.Error = &struct {
			Kind string `json:"kind"`
		}{res.Error.Kind}
	}
	return l
}
