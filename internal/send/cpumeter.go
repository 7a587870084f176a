package send

import (
	"math"
	"runtime"
	"sync"
	"time"
)

// cpuWindow is the shortest span a client_cpu figure covers: getrusage
// counts in microseconds and a scheduler tick is 1–10 ms, so shorter
// windows are noise.
const cpuWindow = 100 * time.Millisecond

// cpuClock reads the run's wall time and the process's CPU time (ok false:
// not measurable here).
type cpuClock struct {
	wall func() time.Duration
	cpu  func() (time.Duration, bool)
}

// cpuMeter measures send's own CPU use (getrusage, the whole process)
// over windows of at least cpuWindow, as a fraction of the cores it may
// use (GOMAXPROCS): 1 is every core busy. Each record gets the figure of
// the last window that ended before it was written.
type cpuMeter struct {
	clock cpuClock
	cores float64

	mu                sync.Mutex
	lastWall, lastCPU time.Duration
	cur               float64
	have, off         bool
}

// newCPUMeter reads the process's CPU time, or clock when set (tests).
func newCPUMeter(clock *cpuClock) *cpuMeter {
	m := &cpuMeter{cores: float64(runtime.GOMAXPROCS(0))}
	if clock != nil {
		m.clock = *clock
	} else {
		start := time.Now()
		m.clock = cpuClock{wall: func() time.Duration { return time.Since(start) }, cpu: processCPU}
	}
	m.lastWall = m.clock.wall()
	var ok bool
	m.lastCPU, ok = m.clock.cpu()
	m.off = !ok
	return m
}

// sample is the current figure; false before the first window ended.
func (m *cpuMeter) sample() (float64, bool) {
	if m.off {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	wall := m.clock.wall()
	if d := wall - m.lastWall; d >= cpuWindow {
		if cpu, ok := m.clock.cpu(); ok {
			m.cur = math.Round(float64(cpu-m.lastCPU)/float64(d)/m.cores*1000) / 1000
			m.have = true
			m.lastWall, m.lastCPU = wall, cpu
		}
	}
	return m.cur, m.have
}
