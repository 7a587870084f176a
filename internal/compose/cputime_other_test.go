//go:build !unix

package compose

import "time"

// cpuTime is not measured here; the CPU ratio then reads 0.
func cpuTime() time.Duration { return 0 }
