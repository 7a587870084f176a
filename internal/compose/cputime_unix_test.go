//go:build unix

package compose

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: on a shared
// machine a benchmark's wall-clock ratio swings with the other load, its
// CPU ratio much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
