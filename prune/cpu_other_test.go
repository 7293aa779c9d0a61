//go:build !unix

package prune_test

import "time"

// cpu is not measured on this platform.
func cpu() time.Duration { return 0 }
