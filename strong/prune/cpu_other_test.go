//go:build !unix

package prune_test

import "time"

// cpu is unavailable here: the benchmarks report wall time only.
func cpu() time.Duration { return 0 }
