//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time, user and system, of the whole process
// (all its threads) so far; 0 when the platform does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
