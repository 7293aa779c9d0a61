//go:build linux

package memlimit

import (
	"math"
	"syscall"
)

// rooms lists the room each limit Linux sets leaves this process.
func rooms() []room {
	p := procFS{}
	out := p.cgroupRooms()
	if r, ok := p.memAvailable(); ok {
		out = append(out, r)
	}
	if lim, ok := asLimit(); ok {
		if r, ok := p.addressSpace(lim); ok {
			out = append(out, r)
		}
	}
	return out
}

// asLimit returns the soft RLIMIT_AS, if there is one.
func asLimit() (int64, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur >= math.MaxInt64 {
		return 0, false
	}
	return int64(rl.Cur), true
}

// addressSpaceNow returns RLIMIT_AS and the process's virtual size, when
// there is such a limit.
func addressSpaceNow() (limit, mapped int64, ok bool) {
	lim, ok := asLimit()
	if !ok {
		return 0, 0, false
	}
	vm, ok := procFS{}.kbField("/proc/self/status", "VmSize")
	return lim, vm, ok
}

// residentSize returns the process's resident set size.
func residentSize() (int64, bool) {
	return procFS{}.kbField("/proc/self/status", "VmRSS")
}
