//go:build unix

package history

import "syscall"

// cpuTime is the process's user and system CPU time so far, in
// nanoseconds: on a shared machine it varies less than the elapsed time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
