package send

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/pace"
)

// TestStopper: stopping issue leaves requests in flight alone until the
// grace period is over; finishing first keeps them; abort is immediate.
func TestStopper(t *testing.T) {
	st := newStopper(context.Background(), 0, 0)
	st.stopIssue(errors.New("stop"))
	select {
	case <-st.hard.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("grace 0: requests in flight not abandoned")
	}
	st.release()

	st = newStopper(context.Background(), 0, time.Hour)
	st.stopIssue(errors.New("stop"))
	st.finished()
	if st.hard.Err() != nil {
		t.Error("hard stop before the grace period ended")
	}
	st.release()

	parent, cancel := context.WithCancel(context.Background())
	st = newStopper(parent, 0, time.Hour)
	cancel()
	<-st.issue.Done()
	if st.hard.Err() != nil {
		t.Error("a cancelled parent must not abandon requests in flight at once")
	}
	st.abort()
	if st.hard.Err() == nil || context.Cause(st.issue) == nil {
		t.Error("abort")
	}
	st.release()
}

// fakePoster answers from a script, one result per request, and keeps the
// bodies it got.
type fakePoster struct {
	results []records.Result
	bodies  [][]byte
}

func (f *fakePoster) do(_ context.Context, _ time.Duration, body []byte) records.Result {
	f.bodies = append(f.bodies, body)
	r := f.results[0]
	f.results = f.results[1:]
	return r
}

// TestWorkerSyntheticHistory: a failed turn is recorded and the next turn
// goes out with compose's reply as history, marked synthetic; a
// successful reply is used as it came.
func TestWorkerSyntheticHistory(t *testing.T) {
	c := conv("a", 0, cachebust.None, "", "one", "two", "three")
	fp := &fakePoster{results: []records.Result{
		{Error: &records.RequestError{Kind: records.ErrHTTP5xx}},
		{OK: true, OutputText: "served reply"},
		{OK: true},
	}}
	var recs []records.Request
	w := &worker{reqs: plainRequests{newBuilder(t, PayloadOptions{})}, post: fp, hard: context.Background(), timeout: time.Second, now: time.Now,
		admit: func(r time.Time) (pace.Slot, bool) { return pace.Slot{Due: r}, true }, ended: func(pace.Slot) {}, emit: func(r *records.Request) error { recs = append(recs, *r); return nil }}
	more, err := w.session(pace.Session{Conv: &c}, time.Time{})
	if !more || err != nil || len(recs) != 3 {
		t.Fatalf("more %v, err %v, %d records", more, err, len(recs))
	}
	if recs[0].SyntheticHistory || !recs[1].SyntheticHistory || !recs[2].SyntheticHistory {
		t.Errorf("synthetic_history %v %v %v, want false true true", recs[0].SyntheticHistory, recs[1].SyntheticHistory, recs[2].SyntheticHistory)
	}
	var last body
	if err := json.Unmarshal(fp.bodies[2], &last); err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, m := range last.Messages {
		history = append(history, m.Role+":"+m.Content)
	}
	if want := "user:one assistant:reply 0 user:two assistant:served reply user:three"; strings.Join(history, " ") != want {
		t.Errorf("third request's messages %q, want %q", history, want)
	}
}

// TestWorkerStops: no admission, no request; a record that cannot be
// written stops the run as a writeError.
func TestWorkerStops(t *testing.T) {
	c := conv("a", 0, cachebust.None, "", "one", "two")
	fp := &fakePoster{results: []records.Result{{OK: true}, {OK: true}}}
	n := 0
	w := &worker{reqs: plainRequests{newBuilder(t, PayloadOptions{})}, post: fp, hard: context.Background(), timeout: time.Second, now: time.Now,
		admit: func(r time.Time) (pace.Slot, bool) { n++; return pace.Slot{Due: r}, n == 1 }, ended: func(pace.Slot) {}, emit: func(*records.Request) error { return nil }}
	if more, err := w.session(pace.Session{Conv: &c}, time.Time{}); more || err != nil || len(fp.bodies) != 1 {
		t.Errorf("more %v, err %v, %d requests; want false, nil, 1", more, err, len(fp.bodies))
	}
	w.admit = func(r time.Time) (pace.Slot, bool) { return pace.Slot{Due: r}, true }
	w.emit = func(*records.Request) error { return errors.New("disk full") }
	var we *writeError
	if _, err := w.session(pace.Session{Conv: &c}, time.Time{}); !errors.As(err, &we) {
		t.Errorf("err %v, want a writeError", err)
	}
}

// TestRecorder counts what it wrote, failures by kind, and writes whole
// lines on flush.
func TestRecorder(t *testing.T) {
	var out bytes.Buffer
	r := newRecorder(&out)
	for _, res := range []records.Result{
		{OK: true},
		{Error: &records.RequestError{Kind: records.ErrTimeout}},
		{Error: &records.RequestError{Kind: records.ErrTimeout}},
		{Error: &records.RequestError{Kind: records.ErrHTTP5xx}},
	} {
		if err := r.write(&records.Request{Kind: records.KindRequest, Result: &res}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	sum := r.summary()
	if sum.Requests != 4 || sum.Failed != 3 || sum.ByKind[records.ErrTimeout] != 2 || sum.ByKind[records.ErrHTTP5xx] != 1 {
		t.Errorf("summary %+v", sum)
	}
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("%d lines written, want 4", n)
	}
}

// TestCheckDataset: --requests beyond one pass needs --recycle; an empty
// shard is refused.
func TestCheckDataset(t *testing.T) {
	convs := dataset(3, 2) // 6 requests a pass
	for _, c := range []struct {
		o  Config
		ok bool
	}{
		{Config{Requests: 6}, true},
		{Config{Requests: 7}, false},
		{Config{Requests: 7, Recycle: true}, true},
		{Config{Requests: 3, Shard: Shard{I: 1, N: 3}}, false}, // the shard holds 2
		{Config{Shard: Shard{I: 4, N: 5}}, false},
	} {
		if err := c.o.CheckDataset(convs); (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.o, err)
		}
	}
}

// TestRecorderStopAfter: n failures in a row call the stop once; a success
// between them starts the count over; cancelled requests do not count.
func TestRecorderStopAfter(t *testing.T) {
	r := newRecorder(&bytes.Buffer{})
	calls := 0
	r.stopAfter(3, func() { calls++ })
	fail := records.Result{Error: &records.RequestError{Kind: records.ErrHTTP5xx}}
	cancelled := records.Result{Error: &records.RequestError{Kind: records.ErrCancelled}}
	ok := records.Result{OK: true}
	for i, res := range []records.Result{fail, fail, ok, fail, cancelled, fail, fail, fail, fail} {
		if err := r.write(&records.Request{Result: &res}); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[i >= 6]; calls != want {
			t.Errorf("after record %d: %d calls, want %d", i, calls, want)
		}
	}
}
