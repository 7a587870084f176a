package send

import (
	"errors"
	"fmt"
	"math"

	"github.com/islkit/islkit/internal/records"
)

// Schedules (--schedule).
const (
	ScheduleNone       = ""
	ScheduleTimestamps = "timestamps"
)

// validateSchedule checks --schedule and --speedup; a timestamp schedule
// issues every conversation at its own time, so it takes no --rate, and
// without --concurrency as many sessions run at once as the trace asks
// (up to RateOnlyWorkers).
func (o *Config) validateSchedule() error {
	switch o.Schedule {
	case ScheduleNone:
		if o.Speedup != 0 && o.Speedup != 1 {
			return errors.New("--speedup needs --schedule timestamps")
		}
		return nil
	case ScheduleTimestamps:
	default:
		return fmt.Errorf("--schedule %q: want %s", o.Schedule, ScheduleTimestamps)
	}
	switch {
	case o.Speedup == 0: // 1, the trace's own pace
	case math.IsNaN(o.Speedup) || math.IsInf(o.Speedup, 0) || o.Speedup < 0 || o.Speedup > 1e6:
		return fmt.Errorf("--speedup %v: want a positive factor (2 replays twice as fast)", o.Speedup)
	}
	switch {
	case o.Rate > 0:
		return errors.New("--schedule timestamps sets every request's time: drop --rate")
	case o.Recycle:
		return errors.New("--schedule timestamps replays the trace once: drop --recycle")
	}
	return nil
}

// checkTimestamps requires every conversation to carry a trace timestamp.
func checkTimestamps(convs []records.Conversation) error {
	for i := range convs {
		if t := convs[i].Trace; t == nil || t.TimestampMs == nil {
			return fmt.Errorf("conversation %s has no trace timestamp: --schedule timestamps replays compose --trace output of a trace with timestamps", convs[i].ID)
		}
	}
	return nil
}
