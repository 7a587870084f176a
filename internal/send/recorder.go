package send

import (
	"io"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
)

// writeError is a record that could not be written: the run stops at once.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// recorder writes the request records (safe for concurrent workers) and
// counts them.
type recorder struct {
	jw           *jsonl.Writer
	done, failed atomic.Int64
	cancelled    atomic.Int64
	resized      atomic.Int64
	unreachable  atomic.Int64
	mu           sync.Mutex
	byKind       map[string]int
	// maxRun, when > 0, is how many failures in a row (in completion
	// order) call onRun, once.
	maxRun int
	run    int
	onRun  func()
	// cpu stamps each record's client_cpu (nil: none); lags and cpus are
	// the measured records' figures, for the client verdict.
	cpu  *cpuMeter
	lags []int64
	// sizing is each lag's part spent by --exact's sizing (0 without).
	sizing []int64
	// queue is each lag's part spent waiting for a free worker or for
	// the warmup to end (0 when none).
	queue []int64
	cpus  []float64
	limit report.ClientLimits
	// stage adds up the stage running (--stages), for its verdict; nil:
	// none.
	stage *report.Accumulator
}

// setStage makes the records from now on add up in acc (nil: nowhere).
func (r *recorder) setStage(acc *report.Accumulator) {
	r.mu.Lock()
	r.stage = acc
	r.mu.Unlock()
}

func newRecorder(w io.Writer) *recorder {
	return &recorder{jw: jsonl.NewWriter(w), byKind: map[string]int{}}
}

// stopAfter makes n failures in a row call f (once); n 0 never does.
func (r *recorder) stopAfter(n int, f func()) { r.maxRun, r.onRun = n, f }

// write encodes one record and counts it. A request cancelled at stop
// (signal, end of --duration plus grace) is not a failure of the server.
func (r *recorder) write(rec *records.Request) error {
	if rec.ResizedFrom != nil {
		r.resized.Add(1)
	}
	if rec.Unreachable != nil {
		r.unreachable.Add(1)
	}
	res := rec.Result
	if res != nil && r.cpu != nil {
		if v, ok := r.cpu.sample(); ok {
			res.ClientCPU = &v
		}
	}
	fire := false
	if res != nil {
		// One lock a record: every worker comes through here.
		r.mu.Lock()
		if !rec.Warmup {
			if res.ScheduleLagNs != nil {
				r.lags = append(r.lags, *res.ScheduleLagNs)
				r.sizing = append(r.sizing, deref(res.SizingNs))
				r.queue = append(r.queue, deref(res.QueueNs))
			}
			if res.ClientCPU != nil {
				r.cpus = append(r.cpus, *res.ClientCPU)
			}
		}
		if r.stage != nil {
			r.stage.AddRequest(report.Request{Warmup: rec.Warmup, Unmeasured: true, Live: liveOf(res), Stage: rec.Stage})
		}
		switch {
		case !res.OK && res.Error != nil && res.Error.Kind == records.ErrCancelled:
			r.cancelled.Add(1)
		case !res.OK && res.Error != nil:
			r.failed.Add(1)
			r.byKind[res.Error.Kind]++
			r.run++
			fire = r.maxRun > 0 && r.run == r.maxRun
		default:
			r.run = 0
		}
		r.mu.Unlock()
	}
	if fire {
		r.onRun()
	}
	if err := r.jw.Encode(rec); err != nil {
		return err
	}
	r.done.Add(1)
	return nil
}

// writeMetrics writes a metrics sample between the request records.
func (r *recorder) writeMetrics(m *records.Metrics) error { return r.jw.Encode(m) }

// flush writes out the records buffered so far.
func (r *recorder) flush() error { return r.jw.Flush() }

// loop flushes and calls tick every period until the returned stop is
// called; a flush error goes to onErr.
func (r *recorder) loop(every time.Duration, onErr func(error), tick func()) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := r.flush(); err != nil {
					onErr(&writeError{err})
				}
				tick()
			case <-quit:
				return
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// summary is what the records so far add up to.
func (r *recorder) summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summary{Requests: int(r.done.Load()), Failed: int(r.failed.Load()), Cancelled: int(r.cancelled.Load()),
		ByKind: maps.Clone(r.byKind), Resized: int(r.resized.Load()), Unreachable: int(r.unreachable.Load()),
		Client: report.CheckClient(r.lags, r.sizing, r.queue, r.cpus, r.limit)}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
