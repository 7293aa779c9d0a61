//go:build unix

package prune_test

import (
	"syscall"
	"time"
)

// cpu returns the process's user+system CPU time, steadier than wall time
// on a busy machine.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
