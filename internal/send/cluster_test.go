package send

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestParseShardEnv: --shard env/N takes I from $JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job's pod index); a missing or out-of-range index is
// an error naming the variable; I/N is read as before.
func TestParseShardEnv(t *testing.T) {
	env := func(v string, set bool) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name != ShardIndexEnv {
				t.Fatalf("looked up %s", name)
			}
			return v, set
		}
	}
	for _, c := range []struct {
		arg     string
		idx     string
		set     bool
		want    Shard
		wantErr string
	}{
		{"env/4", "2", true, Shard{2, 4}, ""},
		{"env/4", "0", true, Shard{0, 4}, ""},
		{"1/3", "", false, Shard{1, 3}, ""},
		{"", "", false, Shard{}, ""},
		{"env/4", "", false, Shard{}, "$JOB_COMPLETION_INDEX is not set"},
		{"env/4", "4", true, Shard{}, "completions must be N"},
		{"env/4", "x", true, Shard{}, "is not an index"},
		{"env/0", "0", true, Shard{}, "want I/N"},
		{"env", "1", true, Shard{}, "want I/N"},
	} {
		got, err := ParseShardEnv(c.arg, env(c.idx, c.set))
		if c.wantErr == "" {
			if err != nil || got != c.want {
				t.Errorf("%q with %q: %v, %v; want %v", c.arg, c.idx, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%q with %q: error %v, want one saying %q", c.arg, c.idx, err, c.wantErr)
		}
	}
}

// TestParseStartAt: --start-at is RFC 3339 (any zone, fractions), at most
// a minute past and a day ahead of now.
func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		arg     string
		want    time.Time
		wantErr string
	}{
		{"2026-01-02T15:02:00Z", now.Add(2 * time.Minute), ""},
		{"2026-01-02T16:02:00.5+01:00", now.Add(2*time.Minute + 500*time.Millisecond), ""},
		{"2026-01-02T14:59:30Z", now.Add(-30 * time.Second), ""}, // a late pod starts at once
		{"2026-01-02T14:58:59Z", time.Time{}, "1m1s in the past"},
		{"2026-01-03T15:00:01Z", time.Time{}, "24h0m1s ahead"},
		{"2026-01-02 15:02:00", time.Time{}, "want an RFC 3339 time"},
		{"tomorrow", time.Time{}, "want an RFC 3339 time"},
	} {
		got, err := ParseStartAt(c.arg, now)
		if c.wantErr == "" {
			if err != nil || !got.Equal(c.want) {
				t.Errorf("%q: %v, %v; want %v", c.arg, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "--start-at") {
			t.Errorf("%q: error %v, want one naming --start-at and saying %q", c.arg, err, c.wantErr)
		}
	}
}

// TestWaitUntil: the wait ends no earlier than its time, and a cancelled
// context ends it at once with its error.
func TestWaitUntil(t *testing.T) {
	at := time.Now().Add(50 * time.Millisecond)
	if err := WaitUntil(context.Background(), at); err != nil || time.Now().Before(at) {
		t.Errorf("WaitUntil returned %v before %v", err, at)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitUntil(ctx, time.Now().Add(time.Hour)); err != context.Canceled {
		t.Errorf("cancelled wait: %v", err)
	}
}

// FuzzParseShardEnv: whatever the flag and the variable, a shard
// accepted is one send can run (0 <= I < N), and a start time accepted
// is within its bounds.
func FuzzParseShardEnv(f *testing.F) {
	f.Add("env/4", "2", "2026-01-02T15:02:00Z")
	f.Add("1/3", "", "2026-01-02T16:02:00.5+01:00")
	f.Add("env/0", "-1", "2026-13-02T15:02:00Z")
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, arg, idx, at string) {
		s, err := ParseShardEnv(arg, func(string) (string, bool) { return idx, idx != "" })
		if err == nil && s.N != 0 && (s.I < 0 || s.I >= s.N) {
			t.Fatalf("%q with %q: shard %+v", arg, idx, s)
		}
		if ts, err := ParseStartAt(at, now); err == nil && (ts.Sub(now) < -MaxStartLate || ts.Sub(now) > MaxStartAhead) {
			t.Fatalf("%q accepted: %v", at, ts)
		}
	})
}
