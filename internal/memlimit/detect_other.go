//go:build !linux

package memlimit

// rooms finds no limit outside Linux: only --max-memory and GOMEMLIMIT
// bound a check there.
func rooms() []room { return nil }

func addressSpaceNow() (limit, mapped int64, ok bool) { return 0, 0, false }

func residentSize() (int64, bool) { return 0, false }
