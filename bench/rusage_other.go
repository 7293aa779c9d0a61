//go:build !unix

package bench

import "os"

// usage returns the child's CPU time; the peak memory is not known here.
func usage(ps *os.ProcessState) (maxRSS int64, userMS, sysMS float64) {
	return 0, float64(ps.UserTime().Microseconds()) / 1000, float64(ps.SystemTime().Microseconds()) / 1000
}
