package send

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/h1"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/send/pace"
	"github.com/islkit/islkit/internal/wire"
)

// Rate distributions (pace's).
const (
	RateConstant = pace.RateConstant
	RatePoisson  = pace.RatePoisson
	RateGamma    = pace.RateGamma
)

// Config is what the user configures of a live run (send's flags).
// Validate checks it and fills in its defaults; Run validates a Config
// that has not been through Validate.
type Config struct {
	URL string // server or endpoint URL (see wire.URLFor)
	// Endpoint is the endpoint the conversations were composed for
	// (CheckEndpoint); "" is chat. A bare --url gets its path.
	Endpoint endpoint.Kind
	APIKey   string
	Header   http.Header // extra request headers
	// Concurrency is the number of sessions in flight (AIPerf's
	// --concurrency); Rate the requests per second. At least one is set;
	// with Rate alone, or a timestamp Schedule, up to RateOnlyWorkers
	// sessions run at once.
	Concurrency      int
	Rate             float64
	RateDistribution string
	// Burstiness is the gamma shape of RateGamma (vLLM's --burstiness:
	// 1 is Poisson, below 1 burstier, above 1 more even); 0 means 1.
	Burstiness float64
	Seed       uint64
	// RampUp raises the load linearly from nothing to full over its
	// length: the rate (with Rate; see pace.Arrivals) or else the sessions in
	// flight, one more at even steps from 1 to Concurrency (pace.RampStart).
	RampUp time.Duration
	// Warmup requests are sent first, marked warmup in their records, and
	// the measured requests (Requests of them, for Duration) start their
	// schedule once every warmup request has ended.
	Warmup int
	// Requests caps the requests sent (0: no cap); Duration stops issuing
	// after that long (0: none). Recycle starts the dataset over with new
	// markers until one of them stops the run.
	Requests int
	Duration time.Duration
	Recycle  bool
	Timeout  time.Duration // per request
	// Grace is how long in-flight requests may finish once issuing stops.
	Grace     time.Duration
	Shard     Shard
	NoPayload bool
	// Schedule "timestamps" issues each conversation at its trace
	// timestamp (relative to the first), divided by Speedup (default 1).
	Schedule string
	Speedup  float64
	// TLS is the client TLS configuration (TLSConfig); nil: the system's
	// roots.
	TLS *tls.Config
	// MaxConsecutiveErrors, when > 0, stops issuing after that many
	// failed requests in a row: the server is down, and hammering it only
	// fills the records with the same error.
	MaxConsecutiveErrors int
	// ClientLimits are when the run's Summary.Client says the client was
	// saturated (report.CheckClient).
	ClientLimits report.ClientLimits
	// Scrape samples the server's metrics into the records (scrape.go).
	Scrape ScrapeConfig
	// Stages, when set, runs its load levels one after another (send
	// --stages; stages.go) instead of one level.
	Stages *StagePlan
	// checked: this is Validate's copy, its defaults filled in.
	checked bool
}

// Wiring is what a run is wired with besides the user's Config: the
// sizer of --exact, where progress goes, and (tests, benchmarks) the
// client, the clocks and an observer of send's own time.
type Wiring struct {
	// Progress, when set, receives a progress line twice a second.
	Progress io.Writer
	// StageDone, when set, gets each stage's figures as it ends
	// (--stages).
	StageDone func(report.StageReport)
	// Sizer, when set (send --exact), makes every request count exactly
	// its target_isl against the real replies of its history.
	Sizer *exact.Sizer
	// Stage, when set (tests), replaces the run's own answer to which
	// load level is running now, which stamps each metrics sample.
	Stage func() *records.Stage
	// observe, when set (benchmarks), gets send's own per-request time.
	observe func(time.Duration)
	// post, cpuClock and clock replace the HTTP client, the CPU clock and
	// the clock workers read when ready to send (tests).
	post     poster
	cpuClock *cpuClock
	clock    func() time.Time
}

// RateOnlyWorkers bounds sessions in flight when only --rate is given.
const RateOnlyWorkers = 4096

// Validate refuses nonsensical settings before anything is sent. It
// leaves o as it is and returns the copy a run uses: its defaults filled
// in (--burstiness 1 with gamma, --speedup 1 with a trace schedule, one
// session in flight when neither --concurrency nor --rate says more).
func (o Config) Validate() (Config, error) {
	if err := o.check(); err != nil {
		return Config{}, err
	}
	if o.RateDistribution == RateGamma && o.Burstiness == 0 {
		o.Burstiness = 1
	}
	if o.Schedule == ScheduleTimestamps && o.Speedup == 0 {
		o.Speedup = 1
	}
	if o.Concurrency == 0 && o.Rate == 0 && o.Schedule == ScheduleNone && o.Stages == nil {
		o.Concurrency = 1
	}
	if o.Stages != nil {
		// The stages go on pass after pass; each stops at its own length.
		o.Recycle = true
	}
	o.checked = true
	return o, nil
}

// check is Validate's refusals.
func (o *Config) check() error {
	switch {
	case o.Concurrency < 0 || o.Concurrency > 100000:
		return fmt.Errorf("--concurrency %d: want 1..100000", o.Concurrency)
	case math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate < 0 || o.Rate > 1e6:
		return fmt.Errorf("--rate %v: want a positive number of requests per second up to 1e6", o.Rate)
	case o.Requests < 0:
		return fmt.Errorf("--requests %d: want >= 0", o.Requests)
	case o.Duration < 0:
		return fmt.Errorf("--duration %v: want >= 0", o.Duration)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout %v: want > 0", o.Timeout)
	case o.Grace < 0:
		return fmt.Errorf("--grace %v: want >= 0", o.Grace)
	case o.Warmup < 0:
		return fmt.Errorf("--warmup %d: want >= 0", o.Warmup)
	case o.RampUp < 0:
		return fmt.Errorf("--ramp-up %v: want >= 0", o.RampUp)
	case o.MaxConsecutiveErrors < 0:
		return fmt.Errorf("--max-consecutive-errors %d: want >= 0 (0: never stop)", o.MaxConsecutiveErrors)
	case o.Recycle && o.Requests == 0 && o.Duration == 0 && o.Stages == nil:
		return errors.New("--recycle repeats the dataset forever: add --requests or --duration")
	}
	if err := o.validateSchedule(); err != nil {
		return err
	}
	if err := o.Stages.check(o); err != nil {
		return err
	}
	if err := o.ClientLimits.Validate(); err != nil {
		return err
	}
	if err := o.Scrape.check(); err != nil {
		return err
	}
	switch o.RateDistribution {
	case "", RateConstant, RatePoisson:
		if o.Burstiness != 0 && o.Burstiness != 1 {
			return fmt.Errorf("--burstiness is the shape of --rate-distribution %s: add it", RateGamma)
		}
	case RateGamma:
		switch {
		case o.Burstiness == 0: // 1, Poisson's shape
		case math.IsNaN(o.Burstiness) || math.IsInf(o.Burstiness, 0) || o.Burstiness < 1e-3 || o.Burstiness > 1e3:
			return fmt.Errorf("--burstiness %v: want a gamma shape from 0.001 to 1000 (1: Poisson; below 1 burstier, above 1 more even)", o.Burstiness)
		}
	default:
		return fmt.Errorf("--rate-distribution %q: want %s, %s or %s", o.RateDistribution, RateConstant, RatePoisson, RateGamma)
	}
	if o.RampUp > 0 && o.Schedule != ScheduleNone {
		return errors.New("--schedule timestamps sets every request's time: drop --ramp-up")
	}
	if o.Warmup > 0 && o.Schedule != ScheduleNone {
		return errors.New("--schedule timestamps sets every request's time: drop --warmup (a warmup would hold back the rows after it)")
	}
	if _, err := wire.URLFor(o.Endpoint, o.URL); err != nil {
		return fmt.Errorf("--url %w", err)
	}
	if err := h1.CheckHeader(o.Header); err != nil {
		return fmt.Errorf("-H: %w", err)
	}
	if o.APIKey != "" && h1.CheckHeader(http.Header{"Authorization": {"Bearer " + o.APIKey}}) != nil {
		// Not the key itself in the message.
		return errors.New("--api-key holds a control character (a line break pasted with it?)")
	}
	return nil
}

// CheckDataset refuses options the dataset cannot honour: a shard with no
// conversation, or --requests beyond one pass without --recycle (which
// would silently send fewer).
func (o *Config) CheckDataset(convs []records.Conversation) error {
	mine, planned := selectShard(convs, o.Shard)
	if len(mine) == 0 {
		return fmt.Errorf("shard %d/%d holds none of the %d conversations", o.Shard.I, o.Shard.N, len(convs))
	}
	if o.Requests > planned && !o.Recycle {
		return fmt.Errorf("--requests %d is more than the %d requests of one pass over the dataset: add --recycle to start it over, or lower --requests", o.Requests, planned)
	}
	if o.Warmup > 0 && !o.Recycle && o.Warmup+max(o.Requests, 1) > planned {
		return fmt.Errorf("--warmup %d and --requests %d need more than the %d requests of one pass over the dataset: add --recycle to start it over, or lower them", o.Warmup, o.Requests, planned)
	}
	if o.Schedule == ScheduleTimestamps {
		return checkTimestamps(convs)
	}
	return nil
}

// Summary is what a live run did.
type Summary struct {
	Requests int // records written
	// Failed counts requests the server or the network failed, by error
	// kind in ByKind; Cancelled those cut off at stop (a signal, or the end
	// of --duration plus --grace), which are not failures.
	Failed    int
	Cancelled int
	ByKind    map[string]int
	Elapsed   time.Duration
	// Interrupted is set when the parent context was cancelled.
	Interrupted bool
	// GaveUp is set when --max-consecutive-errors stopped the run.
	GaveUp bool
	// Resized and Unreachable count the requests send --exact resized
	// and those whose target it could not meet.
	Resized, Unreachable int
	// Client is the verdict on send itself over the measured requests
	// (schedule lag, CPU use); nil when no request was sent. Its Warning
	// says when the latencies include client time.
	Client *report.Client
	// ScrapeOff says why an automatic --scrape-metrics scraped nothing
	// ("" when it scraped, or was off).
	ScrapeOff string
	// Stages are the figures of each stage run (--stages), with their
	// SLO verdicts and client verdicts; Search is what --until-slo found
	// (nil without it).
	Stages []report.StageReport
	Search *pace.Result
}

// ErrServerDown is the cause of a run stopped by MaxConsecutiveErrors.
var ErrServerDown = errors.New("too many consecutive errors")

// FailedKinds names the failures by kind, most frequent first:
// "3 timeout, 1 http_5xx".
func (s Summary) FailedKinds() string {
	kinds := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := kinds[i], kinds[j]
		if s.ByKind[a] != s.ByKind[b] {
			return s.ByKind[a] > s.ByKind[b]
		}
		return a < b
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", s.ByKind[k], k)
	}
	return strings.Join(parts, ", ")
}

// Run sends the conversations and writes one record per request to w. It
// returns an error only for a failure of the run itself (unreachable
// server, output closed); failed requests are counted in the Summary.
// A run is one load level (runner.level), or with Stages one after
// another (stages.go).
func Run(ctx context.Context, w io.Writer, convs []records.Conversation, b *Builder, o Config, wr Wiring) (Summary, error) {
	var sum Summary
	if !o.checked {
		var err error
		if o, err = o.Validate(); err != nil {
			return sum, err
		}
	}
	endpoint, _ := wire.URLFor(o.Endpoint, o.URL) // Validate checked it
	if err := o.CheckDataset(convs); err != nil {
		return sum, err
	}
	mine, planned := selectShard(convs, o.Shard)
	if err := CheckReachable(ctx, endpoint, o.TLS); err != nil {
		return sum, err
	}
	r := &runner{wr: wr, endpoint: endpoint, mine: mine, b: b, cache: newCachePredictor()}
	r.rec = newRecorder(w)
	r.rec.cpu, r.rec.limit = newCPUMeter(wr.cpuClock), o.ClientLimits
	r.rec.stopAfter(o.MaxConsecutiveErrors, func() {
		r.gaveUp.Store(true)
		r.stopIssue(ErrServerDown)
	})
	// The first metrics sample goes before the first request, and
	// before the clock of --duration starts.
	stageNow := wr.Stage
	if stageNow == nil {
		stageNow = r.stageNow
	}
	sc, scrapeOff, err := startScrape(ctx, &o, scrapeServer(b, mine), o.TLS, stageNow, r.rec.writeMetrics)
	if err != nil {
		return sum, err
	}
	r.scrape = sc
	start := time.Now()
	// Flush records as they come, so a consumer (measure, tail -f) sees
	// them live, and report progress.
	total := progressTotal(planned, o)
	stopLoop := r.rec.loop(500*time.Millisecond, func(err error) { r.fail(err, true) }, func() {
		if wr.Progress != nil {
			progress(wr.Progress, r.rec.done.Load(), total, r.rec.failed.Load(), time.Since(start), false)
		}
	})
	var stages []report.StageReport
	var search *pace.Result
	if o.Stages == nil {
		_, err := r.level(ctx, o, nil, 0)
		if err != nil {
			r.fail(err, false)
		}
	} else {
		stages, search = r.stages(ctx, o)
	}
	if err := sc.finish(ctx); err != nil {
		r.fail(&writeError{err}, false)
	}
	stopLoop()
	sum = r.rec.summary()
	sum.Stages, sum.Search = stages, search
	sum.ScrapeOff = scrapeOff
	sum.Elapsed = time.Since(start)
	sum.Interrupted = ctx.Err() != nil
	sum.GaveUp = r.gaveUp.Load()
	if wr.Progress != nil {
		progress(wr.Progress, r.rec.done.Load(), total, r.rec.failed.Load(), sum.Elapsed, true)
	}
	runErr := r.err()
	if err := r.rec.flush(); err != nil && runErr == nil {
		runErr = err
	}
	return sum, runErr
}

// runner is one live run: the record writer, and the stop levels of the
// load level running (one, or each stage's in turn).
type runner struct {
	wr       Wiring
	endpoint string
	mine     []*records.Conversation
	b        *Builder
	rec      *recorder
	// cache predicts expected_cached_tokens in issue order, over the
	// whole run: the server's cache outlives a stage.
	cache  *cachePredictor
	gaveUp atomic.Bool
	// scrape samples the server's metrics (nil: not scraped).
	scrape *scraper

	mu     sync.Mutex
	cur    *stopper       // the level running; nil between stages
	stage  *records.Stage // the stage running; nil between stages and in a run of one level
	runErr error
}

// stageNow is the stage running, which stamps each metrics sample.
func (r *runner) stageNow() *records.Stage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stage
}

// fail records a failure of the run and stops it: issuing, and with
// abort the requests in flight too.
func (r *runner) fail(err error, abort bool) {
	r.mu.Lock()
	// The output writer repeats its first error to every worker (and
	// the flush loop): say it once.
	if !errors.Is(r.runErr, err) {
		r.runErr = errors.Join(r.runErr, err)
	}
	st := r.cur
	r.mu.Unlock()
	if st != nil {
		st.stopIssue(err)
		if abort {
			st.abort()
		}
	}
}

func (r *runner) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runErr
}

// stopIssue stops issuing at the level running.
func (r *runner) stopIssue(cause error) {
	r.mu.Lock()
	st := r.cur
	r.mu.Unlock()
	if st != nil {
		st.stopIssue(cause)
	}
}

// level runs one load level (the whole run, or a stage: then every record
// carries it), sessions handed out from the from-th on; it returns where
// the next level goes on. Four parts do the work: a stopper holds the two
// stop levels (stop issuing; abandon requests in flight after the grace
// period), an issuer hands out sessions and admits each request (rate,
// budget), workers send the turns of one session after another, and the
// recorder writes, counts and flushes the records.
func (r *runner) level(ctx context.Context, o Config, stage *records.Stage, from int64) (int64, error) {
	workers := o.Concurrency
	if workers == 0 {
		workers = RateOnlyWorkers
	}
	// A client per level: the hard stop of one aborts its connections.
	cl, err := newClient(o.Endpoint.OrChat(), r.endpoint, o.APIKey, o.Header, o.TLS)
	if err != nil {
		return from, err
	}
	defer cl.closeIdle()

	// --duration is the measured requests': after a warmup it starts when
	// the last warmup request has ended.
	duration := o.Duration
	if o.Warmup > 0 {
		duration = 0
	}
	st := newStopper(ctx, duration, o.Grace)
	defer st.release()
	// The hard stop ends the requests in flight: their connections close.
	defer context.AfterFunc(st.hard, cl.pool.Abort)()
	r.mu.Lock()
	r.cur, r.stage = st, stage
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cur, r.stage = nil, nil
		r.mu.Unlock()
	}()
	if err := r.err(); err != nil {
		st.stopIssue(err) // the run failed before this level began
	}
	sh := o.shape(r.mine)
	sh.From = from
	is := pace.NewIssuer(st.issue, st.deadline, r.mine, sh)
	defer is.Close()
	if o.Warmup > 0 && o.Duration > 0 {
		go func() {
			select {
			case <-is.WarmDone():
				is.SetDeadline(st.startDuration(o.Duration))
			case <-st.issue.Done():
			}
		}()
	}
	var post poster = cl
	if r.wr.post != nil {
		post = r.wr.post
	}
	wk := &worker{reqs: plainRequests{r.b}, post: post, hard: st.hard, timeout: o.Timeout, noPayload: o.NoPayload,
		admit: is.Admit, ended: is.Ended, emit: r.rec.write, observe: r.wr.observe, cache: r.cache, wait: is.Wait, now: time.Now,
		stage: stage}
	if r.wr.Sizer != nil {
		wk.reqs = exactRequests{r.b, r.wr.Sizer}
	}
	if r.b.opts.ResponsesChain {
		wk.chain = r.b
	}
	if r.wr.clock != nil {
		wk.now = r.wr.clock
	}
	start := time.Now()
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			// Each worker's requests hang off a context of its own: as
			// children of the run's one they all took its lock twice a
			// request.
			w := *wk
			hard, cancel := context.WithCancel(st.hard)
			defer cancel()
			w.hard = hard
			// --ramp-up without --rate: worker k joins at its step.
			var ready time.Time
			if o.Rate == 0 && o.RampUp > 0 {
				ready = start.Add(pace.RampStart(k, workers, o.RampUp))
				if !is.Wait(ready) {
					return
				}
			}
			for {
				rd := ready
				if rd.IsZero() {
					rd = w.now()
				}
				s, ok := is.Take(rd)
				if !ok {
					return
				}
				more, err := w.session(s, ready)
				ready = time.Time{}
				if err != nil {
					var we *writeError
					r.fail(err, errors.As(err, &we))
					return
				}
				if !more {
					return
				}
			}
		})
	}
	wg.Wait()
	st.finished()
	return is.Next(), nil
}

// shape is the load shape of o for the issuer: the arrival process
// (ramped up when --rate is; --ramp-up without it starts the workers one
// by one instead), warmup, budget and the trace's times.
func (o *Config) shape(convs []*records.Conversation) pace.Shape {
	sh := pace.Shape{Arrivals: pace.ArrivalOptions{Rate: o.Rate, Dist: o.RateDistribution, Burstiness: o.Burstiness, Seed: o.Seed},
		Warmup: o.Warmup, Requests: o.Requests, Recycle: o.Recycle}
	if o.Rate > 0 {
		sh.Arrivals.Ramp = o.RampUp
	}
	if o.Schedule == ScheduleTimestamps {
		sh.Offsets = pace.Offsets(convs, o.Speedup)
	}
	return sh
}

// selectShard returns the conversations of the shard and their turn count.
func selectShard(convs []records.Conversation, sh Shard) ([]*records.Conversation, int) {
	var mine []*records.Conversation
	planned := 0
	for i := range convs {
		if sh.Has(&convs[i]) {
			mine = append(mine, &convs[i])
			planned += len(convs[i].Turns)
		}
	}
	return mine, planned
}

// progressTotal is the number of requests the progress line counts
// towards; 0 = unknown.
func progressTotal(planned int, o Config) int {
	switch {
	case o.Requests > 0 && (o.Recycle || o.Requests < planned):
		return o.Requests
	case o.Recycle:
		return 0
	}
	return planned
}

func progress(w io.Writer, done int64, total int, failed int64, elapsed time.Duration, last bool) {
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	of := ""
	if total > 0 {
		of = fmt.Sprintf("/%d", total)
	}
	end := ""
	if last {
		end = "\n"
	}
	fmt.Fprintf(w, "\rsend: %d%s requests, %.1f req/s, %d errors, %s   %s", done, of, rate, failed, elapsed.Round(100*time.Millisecond), end)
}
