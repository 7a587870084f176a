package send

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/wire"
)

// Rate distributions.
const (
	RateConstant = "constant"
	RatePoisson  = "poisson"
)

// LiveOptions configure a live run.
type LiveOptions struct {
	URL    string // server or chat-completions endpoint (see wire.EndpointURL)
	APIKey string
	Header http.Header // extra request headers
	// Concurrency is the number of sessions in flight (AIPerf's
	// --concurrency); Rate the requests per second. At least one is set;
	// with Rate alone up to RateOnlyWorkers sessions run at once.
	Concurrency      int
	Rate             float64
	RateDistribution string
	Seed             uint64
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
	// Progress, when set, receives a progress line twice a second.
	Progress io.Writer
	// observe, when set (benchmarks), gets send's own per-request time.
	observe func(time.Duration)
}

// RateOnlyWorkers bounds sessions in flight when only --rate is given.
const RateOnlyWorkers = 4096

// Validate refuses nonsensical settings before anything is sent.
func (o *LiveOptions) Validate() error {
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
	case o.Recycle && o.Requests == 0 && o.Duration == 0:
		return errors.New("--recycle repeats the dataset forever: add --requests or --duration")
	}
	switch o.RateDistribution {
	case "", RateConstant, RatePoisson:
	default:
		return fmt.Errorf("--rate-distribution %q: want %s or %s", o.RateDistribution, RateConstant, RatePoisson)
	}
	if _, err := wire.EndpointURL(o.URL); err != nil {
		return fmt.Errorf("--url %w", err)
	}
	if o.Concurrency == 0 && o.Rate == 0 {
		o.Concurrency = 1
	}
	return nil
}

// Summary is what a live run did.
type Summary struct {
	Requests int
	Failed   int
	ByKind   map[string]int
	Elapsed  time.Duration
	// Interrupted is set when the parent context was cancelled.
	Interrupted bool
}

type session struct {
	c    *records.Conversation
	pass int
}

// Run sends the conversations and writes one record per request to w. It
// returns an error only for a failure of the run itself (unreachable
// server, output closed); failed requests are counted in the Summary.
func Run(ctx context.Context, w io.Writer, convs []records.Conversation, b *Builder, o LiveOptions) (Summary, error) {
	var sum Summary
	if err := o.Validate(); err != nil {
		return sum, err
	}
	endpoint, _ := wire.EndpointURL(o.URL) // Validate checked it
	var mine []*records.Conversation
	planned := 0
	for i := range convs {
		if o.Shard.Has(&convs[i]) {
			mine = append(mine, &convs[i])
			planned += len(convs[i].Turns)
		}
	}
	if len(mine) == 0 {
		return sum, fmt.Errorf("shard %d/%d holds none of the %d conversations", o.Shard.I, o.Shard.N, len(convs))
	}
	if err := CheckReachable(ctx, endpoint); err != nil {
		return sum, err
	}
	workers := o.Concurrency
	if workers == 0 {
		workers = RateOnlyWorkers
	}
	total := planned // for progress; 0 = unknown
	switch {
	case o.Requests > 0 && (o.Recycle || o.Requests < planned):
		total = o.Requests
	case o.Recycle:
		total = 0
	}
	cl := newClient(endpoint, o.APIKey, o.Header, min(workers, 1024))
	defer cl.hc.CloseIdleConnections()
	jw := jsonl.NewWriter(w)

	// issue stops new requests (signal, --duration, --requests, output
	// closed); hard cancels those in flight once the grace period is over.
	issue, stopIssuing := context.WithCancelCause(ctx)
	defer stopIssuing(nil)
	if o.Duration > 0 {
		var cancel context.CancelFunc
		issue, cancel = context.WithTimeout(issue, o.Duration)
		defer cancel()
	}
	hard, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	finished := make(chan struct{})
	go func() {
		select {
		case <-issue.Done():
			select {
			case <-time.After(o.Grace):
				hardStop()
			case <-finished:
			}
		case <-finished:
		}
	}()

	// drain stops issuing too, but without the grace clock: reaching
	// --requests lets the requests in flight finish normally.
	drain, stopDraining := context.WithCancel(issue)
	defer stopDraining()
	var ticks <-chan struct{}
	if o.Rate > 0 {
		ticks = pace(drain, o.Rate, o.RateDistribution == RatePoisson, o.Seed)
	}
	sessions := make(chan session)
	go func() {
		defer close(sessions)
		for pass := 0; ; pass++ {
			for _, c := range mine {
				select {
				case sessions <- session{c, pass}:
				case <-drain.Done():
					return
				}
			}
			if !o.Recycle {
				return
			}
		}
	}()

	var (
		issued, done, failed atomic.Int64
		mu                   sync.Mutex
		byKind               = map[string]int{}
		writeErr             error
	)
	// reserve takes one request from the --requests budget.
	reserve := func() bool {
		if drain.Err() != nil {
			return false
		}
		if o.Requests > 0 && issued.Add(1) > int64(o.Requests) {
			stopDraining()
			return false
		}
		return true
	}
	start := time.Now()
	worker := func() {
		for s := range sessions {
			replies := make([]string, 0, len(s.c.Turns))
			synthetic := false
			for t := range s.c.Turns {
				if ticks != nil {
					select {
					case <-ticks:
					case <-drain.Done():
						return
					}
				}
				if !reserve() {
					return
				}
				t0 := time.Now()
				built, err := b.Build(s.c, t, s.pass, replies)
				if err != nil {
					// Conversations were checked up front; this is a bug
					// or an impossible input, and it stops the run.
					mu.Lock()
					writeErr = errors.Join(writeErr, err)
					mu.Unlock()
					stopIssuing(err)
					return
				}
				rec := newRecord(s.c, t, s.pass, built)
				if t > 0 {
					rec.ExpectedISL = nil
				}
				rec.SyntheticHistory = synthetic
				buildDur := time.Since(t0)
				reqCtx, cancel := context.WithTimeout(hard, o.Timeout)
				res := cl.do(reqCtx, hard, built.Body)
				cancel()
				t1 := time.Now()
				if o.NoPayload {
					rec.Payload = nil
				}
				rec.Result = &res
				if res.OK {
					replies = append(replies, res.OutputText)
				} else {
					// The next turn still goes out, with compose's reply
					// in place of the one that never came.
					replies = append(replies, s.c.Turns[t].Assistant)
					synthetic = true
					failed.Add(1)
					mu.Lock()
					byKind[res.Error.Kind]++
					mu.Unlock()
				}
				if err := jw.Encode(&rec); err != nil {
					mu.Lock()
					if writeErr == nil {
						writeErr = err
					}
					mu.Unlock()
					stopIssuing(err)
					hardStop()
					return
				}
				done.Add(1)
				if o.observe != nil {
					o.observe(buildDur + time.Since(t1))
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(worker)
	}
	// Flush records as they come, so a consumer (measure, tail -f) sees
	// them live, and report progress.
	stopBG := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := jw.Flush(); err != nil {
					stopIssuing(err)
					hardStop()
				}
				if o.Progress != nil {
					progress(o.Progress, done.Load(), total, failed.Load(), time.Since(start), false)
				}
			case <-stopBG:
				return
			}
		}
	})
	wg.Wait()
	close(finished)
	close(stopBG)
	bg.Wait()
	sum.Elapsed = time.Since(start)
	sum.Requests = int(done.Load())
	sum.Failed = int(failed.Load())
	sum.ByKind = byKind
	sum.Interrupted = ctx.Err() != nil
	if o.Progress != nil {
		progress(o.Progress, done.Load(), total, failed.Load(), sum.Elapsed, true)
	}
	if err := jw.Flush(); err != nil && writeErr == nil {
		writeErr = err
	}
	return sum, writeErr
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

// pace emits one tick per request slot: evenly spaced, or with
// exponential gaps (a Poisson process) from a seeded generator. Slots are
// scheduled from the start time, so a slow consumer gets the missed ticks
// at once rather than a lower rate.
func pace(ctx context.Context, rate float64, poisson bool, seed uint64) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		rng := rand.New(rand.NewPCG(seed, 0x15c7))
		start := time.Now()
		var at float64 // seconds since start of the next slot
		timer := time.NewTimer(0)
		defer timer.Stop()
		for i := 0; ; i++ {
			if wait := time.Until(start.Add(time.Duration(at * float64(time.Second)))); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if poisson {
				at += rng.ExpFloat64() / rate
			} else {
				at = float64(i+1) / rate
			}
		}
	}()
	return ch
}
