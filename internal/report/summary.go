// Package report summarises measured request records: the "isl" objects
// measure adds (how often the reported ISL hits its target, how far it
// misses, overall, per turn, per cause) and, for live records, the
// performance of the run (latency, throughput, goodput, concurrency, with
// vLLM bench serve's definitions), as a text table, JSON, an SVG/HTML plot
// and an HTML report.
//
// The ISL part does not grow with the number of records: every error is
// an integer, so a count per distinct error value gives exact means and
// percentiles in space proportional to the number of distinct errors. The
// performance part keeps a few numbers per live request and every
// inter-chunk gap: exact percentiles need every value.
package report

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/islkit/islkit/internal/records"
)

// The comparisons, in report order: indexes of stats.
const (
	vsTarget   = iota // counted − target
	vsExpected        // counted − expected
	vsServer          // server − counted
	comparisons
)

// The gaps split by cause: indexes of Summary.causes.
const (
	gapTarget  = iota // isl.VsTarget
	gapServer         // isl.VsServer
	gapProfile        // isl.VsProfile.Gap
	gaps
)

// hist counts records per signed integer error.
type hist map[int64]uint64

func (h hist) add(v int64) { h[v]++ }

// errorHists holds, for one group of records, the error histogram of
// each comparison (vs target, vs expected, vs server).
type errorHists [comparisons]hist

func newErrorHists() *errorHists {
	var s errorHists
	for i := range s {
		s[i] = hist{}
	}
	return &s
}

// causeAcc accumulates one cause of one gap kind.
type causeAcc struct {
	requests uint64
	tokens   int64 // signed sum, saturating
	abs      int64 // Σ|tokens|, saturating
}

// Accumulator accumulates ISL records. It is not safe for concurrent use:
// measure adds records from the one goroutine that writes its output.
type Accumulator struct {
	requests  uint64
	counted   map[string]uint64 // "templated" / "bare": which count was reported
	tmplErr   uint64
	unread    map[string]uint64 // input lines that could not be measured, by kind
	media     mediaAcc
	all       *errorHists
	turns     map[int]*errorHists
	noTurn    uint64                     // records without a turn index
	turnReqs  map[int]uint64             // requests per turn
	causes    [gaps]map[string]*causeAcc // by gapTarget, gapServer, gapProfile
	causeRecs [gaps]uint64               // records that carried the gap
	profiles  map[string]uint64          // requests per server profile
	compared  map[string]uint64          // requests per --compare-server profile
	warmup    uint64                     // warmup requests, left out
	noPayload uint64                     // send --no-payload records: sent, not recounted
	dups      uint64                     // exact duplicate records dropped (AddDuplicate)
	runs      []records.Run              // the runs' configurations (AddRun)
	shards    shardAcc                   // each run's requests, for the merge of shards
	perf      perfAcc
	stages    map[int]*stageAcc // by stage index (send --stages); nil: none
	osl       oslAcc
	chained   uint64 // turns sent with send --responses-chain
	opts      Options
	cache     *PrefixCache // nil until a record expects cached tokens
	// serverCache is nil until a server reports cached tokens.
	serverCache *ServerCache
	// modelMismatch is nil until a request composed for another model.
	modelMismatch *ModelMismatch
	// met holds send's metrics samples and the witness's client side.
	met metricsAcc
}

type mediaAcc struct {
	requests, images, audios, videos uint64
	countedImages, imageTokens       uint64
}

// NewAccumulator returns an empty Accumulator with the default options.
func NewAccumulator() *Accumulator { return NewAccumulatorWith(Options{}) }

// NewAccumulatorWith returns an empty Accumulator reporting with o.
func NewAccumulatorWith(o Options) *Accumulator {
	return &Accumulator{
		opts:     o,
		perf:     perfAcc{errors: map[string]uint64{}},
		counted:  map[string]uint64{},
		unread:   map[string]uint64{},
		all:      newErrorHists(),
		turns:    map[int]*errorHists{},
		turnReqs: map[int]uint64{},
		causes:   [gaps]map[string]*causeAcc{{}, {}, {}},
		profiles: map[string]uint64{},
		compared: map[string]uint64{},
	}
}

// Reported returns the count measure reports as the request's ISL and
// which one it is: Templated when Counted says so and it is present,
// otherwise Bare (AIPerf's count, and measure's fallback).
func Reported(isl records.ISL) (int, string) {
	if isl.Counted == "templated" && isl.Templated != nil {
		return *isl.Templated, "templated"
	}
	if isl.Bare == nil {
		return 0, "bare"
	}
	return *isl.Bare, "bare"
}

// AddRequest counts one measured request: its ISL, and its outcome when
// it was sent live. Warmup requests are only counted as left out.
func (s *Accumulator) AddRequest(r Request) {
	s.shards.add(r)
	s.met.addRequest(r) // warmup too: the server counted it
	if r.Warmup {
		s.warmup++
		return
	}
	if r.NoPayload {
		s.noPayload++
	}
	if !r.Unmeasured {
		s.Add(r.ISL)
	}
	s.addModelMismatch(r.ModelMismatch)
	if r.Live != nil {
		s.perf.add(r.ISL, r.Live)
		if r.Stage != nil {
			s.addStage(r.Stage, r)
		}
	}
}

// Add counts the ISL of one measured record.
func (s *Accumulator) Add(isl records.ISL) {
	s.requests++
	c, which := Reported(isl)
	s.counted[which]++
	if isl.TemplateError != "" {
		s.tmplErr++
	}
	if m := isl.Media; m != nil && m.Images+m.Audios+m.Videos > 0 {
		s.media.requests++
		s.media.images += uint64(max(m.Images, 0))
		s.media.audios += uint64(max(m.Audios, 0))
		s.media.videos += uint64(max(m.Videos, 0))
	}
	if it := isl.ImageTokens; it != nil {
		s.media.countedImages += uint64(len(it.PerImage))
		s.media.imageTokens += uint64(max(it.Total, 0))
	}
	s.addCache(isl, c)
	s.addServerCache(isl, c)
	s.osl.add(isl.OSL, s.oslTolerance())
	if isl.Chained {
		s.chained++
	}
	var errs [comparisons]*int64
	if isl.Target != nil {
		d := sub(c, *isl.Target)
		errs[vsTarget] = &d
	}
	if isl.Expected != nil {
		d := sub(c, *isl.Expected)
		errs[vsExpected] = &d
	}
	if isl.Server != nil {
		d := sub(*isl.Server, c)
		errs[vsServer] = &d
	}
	var ts *errorHists
	if isl.TurnIndex != nil {
		t := *isl.TurnIndex
		s.turnReqs[t]++
		if ts = s.turns[t]; ts == nil {
			ts = newErrorHists()
			s.turns[t] = ts
		}
	} else {
		s.noTurn++
	}
	for i, e := range errs {
		if e == nil {
			continue
		}
		s.all[i].add(*e)
		if ts != nil {
			ts[i].add(*e)
		}
	}
	if isl.Profile != "" {
		s.profiles[isl.Profile]++
	}
	var vsProfile *records.Gap
	if p := isl.VsProfile; p != nil {
		s.compared[p.Profile]++
		vsProfile = p.Gap
	}
	for i, g := range [gaps]*records.Gap{gapTarget: isl.VsTarget, gapServer: isl.VsServer, gapProfile: vsProfile} {
		if g == nil {
			continue
		}
		s.causeRecs[i]++
		for _, cs := range g.Causes {
			if cs.Tokens == 0 {
				continue
			}
			name := cs.Cause
			if name == "" {
				name = records.CauseUnexplained
			}
			a := s.causes[i][name]
			if a == nil {
				a = &causeAcc{}
				s.causes[i][name] = a
			}
			a.requests++
			a.tokens = satAdd(a.tokens, int64(cs.Tokens))
			a.abs = satAdd(a.abs, absSat(int64(cs.Tokens)))
		}
	}
}

// AddDuplicate counts one record dropped as an exact duplicate of an
// earlier one (same key, same content).
func (s *Accumulator) AddDuplicate() { s.dups++ }

// AddRun records a run's configuration (send's islkit.run record); the
// same configuration twice (`cat s.jsonl s.jsonl`) is kept once.
func (s *Accumulator) AddRun(r records.Run) {
	s.shards.run(r)
	for _, have := range s.runs {
		if reflect.DeepEqual(have, r) {
			return
		}
	}
	s.runs = append(s.runs, r)
}

// Duplicates is the number of records AddDuplicate counted.
func (s *Accumulator) Duplicates() uint64 { return s.dups }

// AddUnreadable counts one input line that could not be measured, by
// kind (e.g. "bad_json", "unknown_shape"; a template error is not one,
// nor is a request that failed: that is in the performance section).
func (s *Accumulator) AddUnreadable(kind string) {
	if kind == "" {
		kind = "unknown"
	}
	s.unread[kind]++
}

// MarshalJSON encodes Report().
func (s *Accumulator) MarshalJSON() ([]byte, error) { return json.Marshal(s.Report()) }

// sub returns a − b, saturated to the int64 range: counts near the limits
// are nonsense input, but must not wrap into a small wrong error.
func sub(a, b int) int64 {
	x, y := int64(a), int64(b)
	d := x - y
	if (y < 0 && d < x) || (y > 0 && d > x) {
		if y < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

func satAdd(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64
	}
	return s
}

func absSat(v int64) int64 {
	if v == math.MinInt64 {
		return math.MaxInt64
	}
	if v < 0 {
		return -v
	}
	return v
}

// sortedTurns returns the turn indices seen, ascending.
func (s *Accumulator) sortedTurns() []int {
	return slices.Sorted(maps.Keys(s.turns))
}

func (s *Accumulator) oslTolerance() OSLTolerance {
	if s.opts.OSLTolerance != nil {
		return *s.opts.OSLTolerance
	}
	return DefaultOSLTolerance
}
