package report

import (
	"maps"
	"math"
	"sort"

	"github.com/islkit/islkit/internal/records"
)

// Report is the summary as data: what MarshalJSON writes and
// schemas/summary.schema.json describes. Field order is the JSON order.
type Report struct {
	Kind          string `json:"kind"` // records.KindSummary
	SchemaVersion int    `json:"schema_version"`
	// Runs are the configurations of the runs measured (send's islkit.run
	// records: one per run or shard), empty for records without them.
	Runs []records.Run `json:"runs"`
	// Shards checks the merge of a run's shards (send --shard); absent
	// when no run record names a shard.
	Shards *Shards `json:"shards,omitempty"`
	// Requests is the number of records added with Add.
	Requests uint64 `json:"requests"`
	// Profiles counts requests per server profile their templated count
	// followed (measure --server); Compared, per --compare-server profile.
	Profiles map[string]uint64 `json:"profiles"`
	Compared map[string]uint64 `json:"compared"`
	// Counted says which count was reported as the ISL, per request.
	Counted Counted `json:"counted"`
	// TemplateErrors counts records whose template failed (counted bare).
	TemplateErrors uint64 `json:"template_errors"`
	// WarmupExcluded counts warmup requests, left out of everything.
	WarmupExcluded uint64 `json:"warmup_excluded"`
	// NoPayload counts live records written by send --no-payload: in the
	// performance section, their ISL not recounted.
	NoPayload uint64 `json:"no_payload"`
	// DuplicatesDropped counts records dropped as exact duplicates of an
	// earlier one (same request key and content: `cat s.jsonl s.jsonl`).
	DuplicatesDropped uint64 `json:"duplicates_dropped"`
	// UnreadableLines are input lines that could not be measured; failed
	// requests are in Performance.
	UnreadableLines Unreadable `json:"unreadable_lines"`
	Media           Media      `json:"media"`
	// Errors of the reported count, all requests together.
	VsTarget   ErrorStats `json:"vs_target"`
	VsExpected ErrorStats `json:"vs_expected"`
	VsServer   ErrorStats `json:"vs_server"`
	// ByTurn splits the same per turn index, ascending; records without a
	// turn index are only in the totals (RequestsWithoutTurn).
	ByTurn              []TurnStats `json:"by_turn"`
	RequestsWithoutTurn uint64      `json:"requests_without_turn"`
	Causes              Causes      `json:"causes"`
	// PrefixCache compares expected and server cached tokens; absent when
	// no record carried expected_cached_tokens.
	PrefixCache *PrefixCache `json:"prefix_cache,omitempty"`
	// ServerCache is what the server reported cached; absent when no
	// record carried the server's cached_tokens.
	ServerCache *ServerCache `json:"server_cache,omitempty"`
	// ModelMismatch counts requests composed for another model than the
	// one measure counted with; absent when there were none.
	ModelMismatch *ModelMismatch `json:"model_mismatch,omitempty"`
	// Chained counts the turns sent with send --responses-chain (counted
	// from the conversation the server reconstructs); absent when none.
	Chained uint64 `json:"chained,omitempty"`
	// OSL is the output length against max_tokens of the live requests
	// (send records, AIPerf raw exports); absent when none had one.
	OSL *OSLReport `json:"osl,omitempty"`
	// Performance is nil (null) unless some record was sent live.
	Performance *Performance `json:"performance"`
	// ServerMetrics is the server's own metrics (send --scrape-metrics)
	// and their second witness; absent without metrics records.
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// Stages are the figures of each stage of a staged run (send
	// --stages), by index; StageSLO names the highest stage that met the
	// SLO (with --slo). Absent without stages.
	Stages   []StageReport `json:"stages,omitempty"`
	StageSLO *StageSLO     `json:"stage_slo,omitempty"`
}

// Counted is the number of requests reported by each count.
type Counted struct {
	Templated uint64 `json:"templated"`
	Bare      uint64 `json:"bare"`
}

// Unreadable counts input lines measure could not measure, by kind.
type Unreadable struct {
	Total  uint64            `json:"total"`
	ByKind map[string]uint64 `json:"by_kind"` // encoded with sorted keys
}

// Media totals the non-text parts of requests that had any.
type Media struct {
	Requests uint64 `json:"requests"`
	Images   uint64 `json:"images"`
	Audios   uint64 `json:"audios"`
	Videos   uint64 `json:"videos"`
	// CountedImages are the images whose tokens are in the templated
	// counts (a vision-language model's processor read), ImageTokens
	// those tokens.
	CountedImages uint64 `json:"counted_images"`
	ImageTokens   uint64 `json:"image_tokens"`
}

// ErrorStats describes the signed errors of one comparison over the
// requests that had both counts (N). Pointers are nil (JSON null) when N
// is 0. Percentiles are nearest-rank over |error|: the smallest value
// with at least ⌈p·N/100⌉ values at or below it, so always an observed
// error.
type ErrorStats struct {
	N            uint64   `json:"n"`
	Exact        uint64   `json:"exact"`
	ExactPct     *float64 `json:"exact_pct"`
	MeanError    *float64 `json:"mean_error"` // signed: the bias
	MeanAbsError *float64 `json:"mean_abs_error"`
	P50AbsError  *int64   `json:"p50_abs_error"`
	P99AbsError  *int64   `json:"p99_abs_error"`
	MaxAbsError  *int64   `json:"max_abs_error"`
	MinError     *int64   `json:"min_error"`
	MaxError     *int64   `json:"max_error"`

	h hist // the signed errors, for the plot
}

// TurnStats is ErrorStats for the requests at one turn index.
type TurnStats struct {
	Turn       int        `json:"turn"`
	Requests   uint64     `json:"requests"`
	VsTarget   ErrorStats `json:"vs_target"`
	VsExpected ErrorStats `json:"vs_expected"`
	VsServer   ErrorStats `json:"vs_server"`
}

// Causes splits the VsTarget, VsServer and VsProfile gaps by named cause.
type Causes struct {
	VsTarget  CauseGroup `json:"vs_target"`
	VsServer  CauseGroup `json:"vs_server"`
	VsProfile CauseGroup `json:"vs_profile"`
}

// CauseGroup is one gap kind: how many records carried it, and each cause
// with non-zero tokens, largest |tokens| first, then by name.
type CauseGroup struct {
	Requests uint64       `json:"requests"`
	Causes   []CauseStats `json:"causes"`
}

// CauseStats sums one cause's tokens; Tokens is signed (shares of opposite
// sign cancel), AbsTokens is not.
type CauseStats struct {
	Cause     string `json:"cause"`
	Requests  uint64 `json:"requests"`
	Tokens    int64  `json:"tokens"`
	AbsTokens int64  `json:"abs_tokens"`
}

// Report computes the summary of everything added so far.
func (s *Accumulator) Report() Report {
	r := Report{
		Kind:              records.KindSummary,
		SchemaVersion:     records.SchemaVersion,
		Runs:              append([]records.Run{}, s.runs...),
		Requests:          s.requests,
		Profiles:          maps.Clone(s.profiles),
		Compared:          maps.Clone(s.compared),
		Counted:           Counted{Templated: s.counted["templated"], Bare: s.counted["bare"]},
		TemplateErrors:    s.tmplErr,
		WarmupExcluded:    s.warmup,
		NoPayload:         s.noPayload,
		DuplicatesDropped: s.dups,
		UnreadableLines:   Unreadable{ByKind: map[string]uint64{}},
		Media: Media{Requests: s.media.requests, Images: s.media.images,
			Audios: s.media.audios, Videos: s.media.videos,
			CountedImages: s.media.countedImages, ImageTokens: s.media.imageTokens},
		VsTarget:            errorStats(s.all[vsTarget]),
		VsExpected:          errorStats(s.all[vsExpected]),
		VsServer:            errorStats(s.all[vsServer]),
		ByTurn:              []TurnStats{},
		RequestsWithoutTurn: s.noTurn,
		PrefixCache:         s.cacheReport(),
		ServerCache:         s.serverCacheReport(),
		ModelMismatch:       cloneMismatch(s.modelMismatch),
		Causes: Causes{
			VsTarget:  causeGroup(s.causeRecs[gapTarget], s.causes[gapTarget]),
			VsServer:  causeGroup(s.causeRecs[gapServer], s.causes[gapServer]),
			VsProfile: causeGroup(s.causeRecs[gapProfile], s.causes[gapProfile]),
		},
	}
	for k, n := range s.unread {
		r.UnreadableLines.ByKind[k] = n
		r.UnreadableLines.Total += n
	}
	r.Performance = s.perf.report(s.opts)
	r.Shards = s.shards.report(s.opts)
	r.ServerMetrics = s.met.report(r.Performance)
	r.Stages, r.StageSLO = s.stageReports()
	r.OSL = s.osl.report(s.oslTolerance())
	r.Chained = s.chained
	for _, t := range s.sortedTurns() {
		st := s.turns[t]
		r.ByTurn = append(r.ByTurn, TurnStats{
			Turn: t, Requests: s.turnReqs[t],
			VsTarget: errorStats(st[vsTarget]), VsExpected: errorStats(st[vsExpected]), VsServer: errorStats(st[vsServer]),
		})
	}
	return r
}

func causeGroup(recs uint64, m map[string]*causeAcc) CauseGroup {
	g := CauseGroup{Requests: recs, Causes: []CauseStats{}}
	for name, a := range m {
		g.Causes = append(g.Causes, CauseStats{Cause: name, Requests: a.requests, Tokens: a.tokens, AbsTokens: a.abs})
	}
	sort.Slice(g.Causes, func(i, j int) bool {
		a, b := g.Causes[i], g.Causes[j]
		if a.AbsTokens != b.AbsTokens {
			return a.AbsTokens > b.AbsTokens
		}
		return a.Cause < b.Cause
	})
	return g
}

func errorStats(h hist) ErrorStats {
	st := ErrorStats{h: h}
	if len(h) == 0 {
		return st
	}
	type absCount struct {
		abs uint64
		n   uint64
	}
	// |v| as uint64 so |MinInt64| is representable; v and −v merge.
	byAbs := make(map[uint64]uint64, len(h))
	var sum, sumAbs float64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for v, n := range h {
		st.N += n
		a := uint64(v)
		if v < 0 {
			a = -a
		}
		byAbs[a] += n
		sum += float64(v) * float64(n)
		sumAbs += float64(a) * float64(n)
		lo, hi = min(lo, v), max(hi, v)
	}
	st.Exact = h[0]
	abs := make([]absCount, 0, len(byAbs))
	for a, n := range byAbs {
		abs = append(abs, absCount{a, n})
	}
	sort.Slice(abs, func(i, j int) bool { return abs[i].abs < abs[j].abs })
	rank := func(p float64) *int64 {
		// Nearest rank ⌈p·N/100⌉ in integers: p·N is exact for p in
		// hundredths, which avoids float rounding at the boundaries.
		k := (uint64(p*100)*st.N + 9999) / 10000
		k = max(k, 1)
		var seen uint64
		for _, e := range abs {
			seen += e.n
			if seen >= k {
				return ptr(clampInt64(e.abs))
			}
		}
		return ptr(clampInt64(abs[len(abs)-1].abs))
	}
	n := float64(st.N)
	st.ExactPct = ptr(100 * float64(st.Exact) / n)
	st.MeanError = ptr(sum / n)
	st.MeanAbsError = ptr(sumAbs / n)
	st.P50AbsError = rank(50)
	st.P99AbsError = rank(99)
	st.MaxAbsError = ptr(clampInt64(abs[len(abs)-1].abs))
	st.MinError, st.MaxError = ptr(lo), ptr(hi)
	return st
}

func clampInt64(a uint64) int64 {
	if a > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(a)
}

func ptr[T any](v T) *T { return &v }

func cloneMismatch(m *ModelMismatch) *ModelMismatch {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}
