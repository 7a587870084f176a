//go:build !unix

package send

import "time"

// processCPU is not measured here: records carry no client_cpu.
func processCPU() (time.Duration, bool) { return 0, false }
