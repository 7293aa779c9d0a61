//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// usage returns a finished child's peak resident set size in bytes and
// its user and system CPU time in milliseconds, from getrusage(2) as
// wait4(2) reported it.
func usage(ps *os.ProcessState) (maxRSS int64, userMS, sysMS float64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, 0, 0
	}
	maxRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		maxRSS *= 1024 // Linux and the BSDs report kilobytes, Darwin bytes.
	}
	return maxRSS, float64(ps.UserTime().Microseconds()) / 1000, float64(ps.SystemTime().Microseconds()) / 1000
}
