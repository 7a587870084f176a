package report

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// A run across machines (send --shard I/N on N machines, deploy/kubernetes)
// is measured from the shards' outputs concatenated, each beginning with
// its islkit.run record: the requests after a run record are its shard's.
// The merge is checked here: every shard there once, every request once
// (measure's Dedup drops exact repeats and refuses conflicting ones before
// they reach the summary), the request set complete when the runs were
// one pass, the shards' start skew, and each shard's own client verdict.

// DefaultStartSkewLimit is the start skew (measure --max-start-skew)
// beyond which the shards did not start together: pods that waited for
// one --start-at start within milliseconds; shards started by hand or
// late pods do not.
const DefaultStartSkewLimit = time.Second

// Shards is the check of merged shard outputs (summary.schema.json,
// "shards"); absent when no run record names a shard.
type Shards struct {
	// N is the number of shards the runs were split into (I/N's N).
	N int `json:"n"`
	// Shards are the shards present, by index.
	Shards []ShardStats `json:"shards"`
	// Missing are the indexes 0..N-1 with no run record; Repeated those
	// with more than one (different) run record.
	Missing  []int `json:"missing"`
	Repeated []int `json:"repeated"`
	// Requests are the measured requests across the shards (warmup left
	// out), each once; Unattributed those before any run record.
	Requests     uint64 `json:"requests"`
	Unattributed uint64 `json:"unattributed"`
	// Complete says whether every request of the dataset is there: every
	// shard once, of one dataset (benchmark id), with as many requests as
	// its run record's turns, all of its own conversations. Null
	// when that cannot be known: a run with --requests, --duration or
	// --recycle, or run records without turns (before islkit's
	// --start-at).
	Complete *bool `json:"complete"`
	// StartAt is the shards' common --start-at, when they had one.
	StartAt string `json:"start_at,omitempty"`
	// StartSkewMs is the spread of the shards' first request starts
	// (latest − earliest); StartedSkewMs that of their run records'
	// started times; null with fewer than two shards with requests.
	StartSkewMs   *float64 `json:"start_skew_ms"`
	StartedSkewMs *float64 `json:"started_skew_ms"`
	// StartSkewLimitMs is measure --max-start-skew; Together says the
	// start skew was within it.
	StartSkewLimitMs float64 `json:"start_skew_limit_ms"`
	Together         bool    `json:"together"`
	// Problems says what failed, one line each; empty when the merge is
	// sound.
	Problems []string `json:"problems"`
}

// ShardStats is one shard's part of the merged run.
type ShardStats struct {
	Shard string `json:"shard"` // I/N
	Index int    `json:"index"`
	// Started and StartAt are its run record's.
	Started string `json:"started"`
	StartAt string `json:"start_at,omitempty"`
	// Turns is its run record's (the requests of one pass); 0 unknown.
	Turns     int    `json:"turns"`
	Requests  uint64 `json:"requests"`
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"` // cancelled included
	// FirstStartMs is its first request's start (warmup included: the
	// load began) after the earliest shard's; LateMs after its
	// --start-at. Null without live requests (or without --start-at).
	FirstStartMs *float64 `json:"first_start_ms"`
	LateMs       *float64 `json:"late_ms"`
	// DurationS and RequestThroughput are its own (first start to last
	// end of its measured requests, succeeded / duration).
	DurationS         float64 `json:"duration_s"`
	RequestThroughput float64 `json:"request_throughput"`
	// Client is the verdict on this shard's send alone (CheckClient): a
	// saturated shard taints the merged latencies.
	Client *Client `json:"client"`
}

// shardRun is one run record and what followed it.
type shardRun struct {
	run                  records.Run
	index, n             int // -1, 0 when the record names no shard
	requests, ok, failed uint64
	first, lo, hi        int64 // first start (warmup too); measured span
	live                 bool
	lags, sizing, queue  []int64
	cpu                  []float64
	benchmarks           map[string]bool // the send records' benchmark ids
	foreign              uint64          // requests of conversations not in the shard
}

type shardAcc struct {
	runs         []*shardRun
	current      *shardRun
	unattributed uint64
}

// run starts the part of the input that belongs to r; the same record
// again (`cat s.jsonl s.jsonl`) goes on with its first copy.
func (a *shardAcc) run(r records.Run) {
	for _, have := range a.runs {
		if reflect.DeepEqual(have.run, r) {
			a.current = have
			return
		}
	}
	sr := &shardRun{run: r, index: -1, first: math.MaxInt64, lo: math.MaxInt64, hi: math.MinInt64}
	if i, n, ok := strings.Cut(r.Shard, "/"); ok {
		ii, err1 := strconv.Atoi(i)
		nn, err2 := strconv.Atoi(n)
		// A shard send could not have run (N above the conversations:
		// send refuses an empty shard) reads as none, bounding the
		// missing-shard list a hand-edited record could ask for.
		if err1 == nil && err2 == nil && ii >= 0 && ii < nn && nn <= max(r.Conversations, 1) {
			sr.index, sr.n = ii, nn
		}
	}
	a.runs = append(a.runs, sr)
	a.current = sr
}

// add attributes one request to the current run.
func (a *shardAcc) add(r Request) {
	sr := a.current
	if sr == nil {
		if !r.Warmup {
			a.unattributed++
		}
		return
	}
	if l := r.Live; l != nil {
		sr.first = min(sr.first, l.StartNs)
	}
	if r.BenchmarkID != "" {
		if sr.benchmarks == nil {
			sr.benchmarks = map[string]bool{}
		}
		sr.benchmarks[r.BenchmarkID] = true
		if sr.n > 0 && r.ConversationIndex%sr.n != sr.index {
			sr.foreign++
		}
	}
	if r.Warmup {
		return
	}
	sr.requests++
	l := r.Live
	if l == nil {
		return
	}
	sr.live = true
	sr.lo, sr.hi = min(sr.lo, l.StartNs), max(sr.hi, satAdd(l.StartNs, max(l.LatencyNs, 0)))
	if l.OK {
		sr.ok++
	} else {
		sr.failed++
	}
	if l.ScheduleLagNs != nil {
		sr.lags = append(sr.lags, *l.ScheduleLagNs)
		sr.sizing = append(sr.sizing, orZero(l.SizingNs))
		sr.queue = append(sr.queue, orZero(l.QueueNs))
	}
	if l.ClientCPU != nil {
		sr.cpu = append(sr.cpu, *l.ClientCPU)
	}
}

func orZero(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// report is the check; nil when no run names a shard.
func (a *shardAcc) report(o Options) *Shards {
	if !slices.ContainsFunc(a.runs, func(sr *shardRun) bool { return sr.index >= 0 }) {
		return nil
	}
	limit := o.StartSkewLimit
	if limit <= 0 {
		limit = DefaultStartSkewLimit
	}
	s := &Shards{Shards: []ShardStats{}, Missing: []int{}, Repeated: []int{}, Problems: []string{},
		Unattributed: a.unattributed, StartSkewLimitMs: float64(limit) / 1e6}
	ns := map[int]bool{}
	for _, sr := range a.runs {
		if sr.index < 0 {
			s.Problems = append(s.Problems, fmt.Sprintf("a run without a shard (started %s) is merged with sharded ones", sr.run.Started))
			continue
		}
		ns[sr.n] = true
		s.N = max(s.N, sr.n)
	}
	if len(ns) > 1 {
		s.Problems = append(s.Problems, fmt.Sprintf("the shards disagree on N: %v", slices.Sorted(maps.Keys(ns))))
	}
	if a.unattributed > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d requests come before any run record: give each shard's output whole, its islkit.run line first", a.unattributed))
	}
	benchmarks := map[string]bool{}
	for _, sr := range a.runs {
		if sr.index >= 0 {
			maps.Copy(benchmarks, sr.benchmarks)
		}
	}
	if len(benchmarks) > 1 {
		s.Problems = append(s.Problems, fmt.Sprintf("the shards' requests come from different compose runs (benchmark ids %s): not shards of one dataset", strings.Join(slices.Sorted(maps.Keys(benchmarks)), ", ")))
	}
	byIndex := map[int]int{}
	startAts := map[string]bool{}
	conversations := map[int]bool{}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var startedLo, startedHi time.Time
	startedN := 0
	knowable := true
	for _, sr := range a.runs {
		if sr.index < 0 {
			continue
		}
		byIndex[sr.index]++
		startAts[sr.run.StartAt] = true
		conversations[sr.run.Conversations] = true
		s.Requests += sr.requests
		if sr.first != math.MaxInt64 {
			lo, hi = min(lo, sr.first), max(hi, sr.first)
		}
		if t, err := time.Parse(time.RFC3339Nano, sr.run.Started); err == nil {
			startedN++
			if startedLo.IsZero() || t.Before(startedLo) {
				startedLo = t
			}
			if t.After(startedHi) {
				startedHi = t
			}
		}
		r := sr.run
		if r.Requests > 0 || r.Duration != "" || r.Recycle || r.Turns == 0 {
			knowable = false
		}
	}
	for i := 0; i < s.N; i++ {
		switch byIndex[i] {
		case 0:
			s.Missing = append(s.Missing, i)
		case 1:
		default:
			s.Repeated = append(s.Repeated, i)
		}
	}
	if len(s.Missing) > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("shards missing: %s of %d", joinInts(s.Missing), s.N))
	}
	if len(s.Repeated) > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("shards with more than one run record: %s (a pod retried, or the same index given twice): their requests may repeat", joinInts(s.Repeated)))
	}
	if len(conversations) > 1 {
		s.Problems = append(s.Problems, fmt.Sprintf("the shards read different datasets (conversations: %v)", slices.Sorted(maps.Keys(conversations))))
	}
	if len(startAts) == 1 {
		for at := range startAts {
			s.StartAt = at
		}
	} else {
		s.Problems = append(s.Problems, "the shards were given different --start-at times")
	}
	var shardsWithStart int
	for _, sr := range a.runs {
		if sr.index < 0 {
			continue
		}
		st := ShardStats{Shard: sr.run.Shard, Index: sr.index, Started: sr.run.Started, StartAt: sr.run.StartAt,
			Turns: sr.run.Turns, Requests: sr.requests, Succeeded: sr.ok, Failed: sr.failed}
		if sr.first != math.MaxInt64 {
			shardsWithStart++
			v := float64(sr.first-lo) / 1e6
			st.FirstStartMs = &v
			if at, err := time.Parse(time.RFC3339Nano, sr.run.StartAt); err == nil {
				late := float64(sr.first-at.UnixNano()) / 1e6
				st.LateMs = &late
			}
		}
		if sr.live && sr.hi > sr.lo {
			st.DurationS = float64(sr.hi-sr.lo) / 1e9
			st.RequestThroughput = float64(sr.ok) / st.DurationS
		}
		st.Client = CheckClient(sr.lags, sr.sizing, sr.queue, sr.cpu, o.Client)
		if w := st.Client.Warning(); w != "" {
			s.Problems = append(s.Problems, "shard "+st.Shard+": "+w)
		}
		if sr.foreign > 0 {
			s.Problems = append(s.Problems, fmt.Sprintf("shard %s holds %d requests of conversations not in it (index mod %d is not %d): outputs mixed up, or a shard's run record missing", st.Shard, sr.foreign, sr.n, sr.index))
		}
		if knowable && uint64(sr.run.Turns) != sr.requests {
			s.Problems = append(s.Problems, fmt.Sprintf("shard %s has %d requests of its %d turns", st.Shard, sr.requests, sr.run.Turns))
		}
		s.Shards = append(s.Shards, st)
	}
	slices.SortStableFunc(s.Shards, func(a, b ShardStats) int { return a.Index - b.Index })
	if shardsWithStart >= 2 {
		v := float64(hi-lo) / 1e6
		s.StartSkewMs = &v
		s.Together = v <= s.StartSkewLimitMs
		if !s.Together {
			s.Problems = append(s.Problems, fmt.Sprintf("the shards did not start together: their first requests span %s ms > %s (--max-start-skew)", fixed(v, 1), limit))
		}
	} else {
		s.Together = true
	}
	if startedN >= 2 {
		v := float64(startedHi.Sub(startedLo)) / 1e6
		s.StartedSkewMs = &v
	}
	if knowable {
		complete := len(s.Missing) == 0 && len(s.Repeated) == 0 && len(ns) == 1 && len(conversations) == 1 && a.unattributed == 0 && len(benchmarks) <= 1
		for _, sr := range a.runs {
			complete = complete && (sr.index < 0 || uint64(sr.run.Turns) == sr.requests && sr.foreign == 0)
		}
		s.Complete = &complete
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// lines are the shard check's summary lines.
func (s *Shards) lines() []string {
	complete := "complete: unknown (a run with --requests, --duration or --recycle, or run records without turns)"
	if s.Complete != nil && *s.Complete {
		complete = "complete: every turn of every shard, each once"
	} else if s.Complete != nil {
		complete = "INCOMPLETE"
	}
	l := fmt.Sprintf("shards: %d of %d, %d requests, %s", len(s.Shards), s.N, s.Requests, complete)
	skew := "start skew: n/a (fewer than two shards with requests)"
	if s.StartSkewMs != nil {
		skew = fmt.Sprintf("start skew: first requests within %s ms (limit %s ms", fixed(*s.StartSkewMs, 1), fixed(s.StartSkewLimitMs, 0))
		if s.StartedSkewMs != nil {
			skew += fmt.Sprintf("; run records' started within %s ms", fixed(*s.StartedSkewMs, 1))
		}
		skew += ")"
		if s.StartAt != "" {
			skew += ", --start-at " + s.StartAt
		}
	}
	out := []string{l, skew}
	for _, p := range s.Problems {
		out = append(out, "shards: "+p)
	}
	return out
}

// table is one row per shard.
func (s *Shards) table() table {
	t := table{head: []string{"shard", "requests", "turns", "ok", "failed", "first start ms", "late ms", "req/s", "lag p99 ms", "cpu p99", "client"}}
	opt := func(v *float64, digits int) string {
		if v == nil {
			return "-"
		}
		return fixed(*v, digits)
	}
	for _, st := range s.Shards {
		verdict, lag, cpu := "-", "-", "-"
		if c := st.Client; c != nil {
			verdict, lag, cpu = "ok", opt(c.LagP99Ms, 2), opt(c.CPUP99, 2)
			if c.Saturated {
				verdict = "SATURATED"
			}
		}
		turns := "-"
		if st.Turns > 0 {
			turns = strconv.Itoa(st.Turns)
		}
		t.rows = append(t.rows, []string{st.Shard, strconv.FormatUint(st.Requests, 10), turns, strconv.FormatUint(st.Succeeded, 10),
			strconv.FormatUint(st.Failed, 10), opt(st.FirstStartMs, 1), opt(st.LateMs, 1), fixed(st.RequestThroughput, 2), lag, cpu, verdict})
	}
	t.note = "first start: a shard's first request after the earliest shard's; late: after --start-at; client: the shard's own verdict (send's limits)"
	return t
}
