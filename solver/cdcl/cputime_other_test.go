//go:build !linux

package cdcl

import "time"

var start = time.Now()

// threadCPU stands in with wall time where the thread's CPU time is not
// available.
func threadCPU() time.Duration { return time.Since(start) }
