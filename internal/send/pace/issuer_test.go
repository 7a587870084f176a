package pace

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/records"
)

func ptrs(convs []records.Conversation) []*records.Conversation {
	out := make([]*records.Conversation, len(convs))
	for i := range convs {
		out[i] = &convs[i]
	}
	return out
}

// dataset is n conversations of `turns` turns each, ids c000, c001, ...
func dataset(n, turns int) []records.Conversation {
	convs := make([]records.Conversation, n)
	for i := range convs {
		convs[i] = records.Conversation{ID: fmt.Sprintf("c%03d", i), Index: i, Turns: make([]records.Turn, turns)}
	}
	return convs
}

// TestIssuerBudgetAcrossPasses: with --recycle the issuer goes through the
// dataset pass after pass and admits exactly --requests requests.
func TestIssuerBudgetAcrossPasses(t *testing.T) {
	convs := ptrs(dataset(3, 1))
	is := NewIssuer(context.Background(), time.Time{}, convs, Shape{Requests: 7, Recycle: true})
	defer is.Close()
	var got []string
	for s := range is.sessions {
		if _, ok := is.Admit(time.Now()); !ok {
			break
		}
		got = append(got, fmt.Sprintf("%s/%d", s.Conv.ID, s.Pass))
	}
	want := "c000/0 c001/0 c002/0 c000/1 c001/1 c002/1 c000/2"
	if strings.Join(got, " ") != want {
		t.Errorf("admitted %v, want %s", got, want)
	}
	if _, ok := is.Admit(time.Now()); ok {
		t.Error("admit after the budget is spent")
	}
}

// TestIssuerOnePass: without --recycle the sessions end with the dataset.
func TestIssuerOnePass(t *testing.T) {
	is := NewIssuer(context.Background(), time.Time{}, ptrs(dataset(4, 2)), Shape{})
	defer is.Close()
	n := 0
	for range is.sessions {
		n++
	}
	if n != 4 {
		t.Errorf("%d sessions, want 4", n)
	}
}

// TestIssuerStopsWithIssue: once issuing ends, nothing more is admitted
// and the sessions channel closes.
func TestIssuerStopsWithIssue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	is := NewIssuer(ctx, time.Time{}, ptrs(dataset(2, 1)), Shape{Recycle: true, Arrivals: ArrivalOptions{Rate: 1}})
	defer is.Close()
	cancel()
	if _, ok := is.Admit(time.Now()); ok {
		t.Error("admitted after issuing stopped")
	}
	for range is.sessions { // must terminate
	}
}

// TestIssuerDeadline: past --duration's end nothing is admitted, even
// before the context's timer has been delivered.
func TestIssuerDeadline(t *testing.T) {
	is := NewIssuer(context.Background(), time.Now().Add(-time.Millisecond), ptrs(dataset(2, 1)), Shape{Recycle: true})
	defer is.Close()
	if _, ok := is.Admit(time.Now()); ok {
		t.Error("admitted after the deadline")
	}
}

// TestIssuerAdmittedSlotGoesOut: a Slot admitted within --requests gets
// its session even when a worker refused by the spent budget stopped
// issuing between the admission and the take.
func TestIssuerAdmittedSlotGoesOut(t *testing.T) {
	is := NewIssuer(context.Background(), time.Time{}, ptrs(dataset(3, 1)), Shape{Requests: 1, Recycle: true})
	defer is.Close()
	sl, ok := is.admitUntil(time.Now(), is.through)
	if !ok {
		t.Fatal("the budget's one request not admitted")
	}
	if _, ok := is.admitUntil(time.Now(), is.through); ok {
		t.Fatal("a second request admitted with --requests 1")
	}
	s, ok := is.hand(sl)
	if !ok || s.Conv.ID != "c000" || s.First == nil {
		t.Fatalf("the admitted Slot's session: %+v %v, want c000", s, ok)
	}
	if _, ok := is.Take(time.Now()); ok {
		t.Error("a session taken after the budget was spent")
	}
}

// TestWarmupPlaceWithoutSession: a warmup place taken by a worker that
// then finds the dataset (sent once) through goes to the one session's
// second turn, which found no place left and waits as a measured request
// for the warmup to end: it waited for ever, the place given back never
// taken (--rate 50 --warmup 2 over one session of three turns hung 5 runs
// in 30).
func TestWarmupPlaceWithoutSession(t *testing.T) {
	is := NewIssuer(context.Background(), time.Time{}, ptrs(dataset(1, 3)), Shape{Warmup: 2})
	defer is.Close()
	// A worker takes a warmup place; before it takes its session, another
	// one takes the other place and the only session.
	b, ok := is.admitUntil(time.Now(), is.through)
	if !ok || !b.Warmup {
		t.Fatalf("first worker's Slot %+v %v, want a warmup place", b, ok)
	}
	a, ok := is.Take(time.Now())
	if !ok || !a.First.Warmup {
		t.Fatalf("second worker's take: %+v %v, want the other warmup place", a, ok)
	}
	is.Ended(*a.First)
	second := make(chan Slot)
	go func() {
		sl, _ := is.Admit(time.Now())
		second <- sl
	}()
	// The second turn most likely waits by now; it takes the place either
	// way.
	time.Sleep(10 * time.Millisecond)
	if _, ok := is.hand(b); ok {
		t.Fatal("a session handed out twice")
	}
	var sl Slot
	select {
	case sl = <-second:
	case <-time.After(time.Minute):
		t.Fatal("the second turn still waits for a warmup place given back")
	}
	if !sl.Warmup {
		t.Fatal("the second turn is measured: the place given back was lost, --warmup 2 sent one")
	}
	is.Ended(sl)
	if sl, ok := is.Admit(time.Now()); !ok || sl.Warmup {
		t.Errorf("the third turn's Slot %+v %v, want a measured one", sl, ok)
	}
}

func TestOffsets(t *testing.T) {
	convs := dataset(4, 1)
	for i, ms := range []float64{1000, 1000, 1250, 3000} {
		convs[i].Trace = &records.TraceRef{Line: i + 1, TimestampMs: &ms}
	}
	var ptrs []*records.Conversation
	for i := range convs {
		ptrs = append(ptrs, &convs[i])
	}
	got := Offsets(ptrs, 2)
	want := []time.Duration{0, 0, 125 * time.Millisecond, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("offsets at speedup 2 = %v, want %v", got, want)
			break
		}
	}
}
