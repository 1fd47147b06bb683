//go:build unix

package proc

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) this process has used so far,
// for benchmarks that report it beside wall time on a loaded machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
