//go:build !linux

package memlimit

// rooms finds no limit outside Linux: only --max-memory and GOMEMLIMIT
// bound a check there.
func rooms() []room { return nil }
