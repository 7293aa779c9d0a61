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
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur < math.MaxInt64 {
		if r, ok := p.addressSpace(int64(rl.Cur)); ok {
			out = append(out, r)
		}
	}
	return out
}
