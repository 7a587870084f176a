package send

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/records"
)

// Runs across machines (deploy/kubernetes): N send processes, one per pod
// of an Indexed Job, each taking its shard index from the pod and all
// starting at one agreed time.

// ShardIndexEnv is the variable Kubernetes sets to the pod's index in an
// Indexed Job (completionMode: Indexed); `--shard env/N` reads it.
const ShardIndexEnv = "JOB_COMPLETION_INDEX"

// ParseShardEnv parses --shard: "I/N", or "env/N", whose I is the
// Indexed Job's pod index read from $JOB_COMPLETION_INDEX with lookup
// (os.LookupEnv). "env" rather than a shell's "$VAR": a container's
// arguments reach send without a shell, and a missing variable is then a
// clear error instead of an empty index.
func ParseShardEnv(v string, lookup func(string) (string, bool)) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	if !ok || i != "env" {
		return ParseShard(v)
	}
	idx, set := lookup(ShardIndexEnv)
	if !set {
		return Shard{}, fmt.Errorf("--shard %q: $%s is not set (Kubernetes sets it in the pods of an Indexed Job, completionMode: Indexed; elsewhere give I/N)", v, ShardIndexEnv)
	}
	if _, err := strconv.Atoi(idx); err != nil {
		return Shard{}, fmt.Errorf("--shard %q: $%s=%q is not an index", v, ShardIndexEnv, idx)
	}
	s, err := ParseShard(idx + "/" + n)
	if err != nil {
		return Shard{}, fmt.Errorf("--shard %q with $%s=%s: want 0 <= index < N (the Job's completions must be N): %w", v, ShardIndexEnv, idx, err)
	}
	return s, nil
}

// Bounds of --start-at around the time send reads it. A shard whose pod
// came up a little late starts at once (measure states the skew); one
// later than MaxStartLate, or a time further ahead than MaxStartAhead,
// is a mistake in the manifest (a stale time, a wrong date or zone).
const (
	MaxStartLate  = time.Minute
	MaxStartAhead = 24 * time.Hour
)

// ParseStartAt reads --start-at: an RFC 3339 time (fractions of a second
// and any zone) within MaxStartLate before now and MaxStartAhead after.
func ParseStartAt(v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time, e.g. %s", v, now.UTC().Add(2*time.Minute).Truncate(time.Second).Format(time.RFC3339))
	}
	switch d := t.Sub(now); {
	case d < -MaxStartLate:
		return time.Time{}, fmt.Errorf("--start-at %s is %s in the past (more than %s): the shards could not start together; give a time ahead of the slowest pod's start", v, (-d).Round(time.Second), MaxStartLate)
	case d > MaxStartAhead:
		return time.Time{}, fmt.Errorf("--start-at %s is %s ahead (more than %s): check the date and the zone (Z is UTC)", v, d.Round(time.Second), MaxStartAhead)
	}
	return t, nil
}

// WaitUntil returns at t, or with ctx's error when ctx ends first (a
// signal stops the wait).
func WaitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ShardTurns is the number of turns of the shard's conversations: the
// requests of one pass (the run record's turns), so measure can tell a
// complete one-pass run from one that lost requests.
func ShardTurns(convs []records.Conversation, sh Shard) int {
	_, n := selectShard(convs, sh)
	return n
}
