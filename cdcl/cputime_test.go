package cdcl

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestCPUTime measures thread CPU time (robust on a shared machine) of the
// default configuration on CDCL_CPU_N-variable instances, CDCL_CPU_R times.
func TestCPUTime(t *testing.T) {
	nv, _ := strconv.Atoi(os.Getenv("CDCL_CPU_N"))
	if nv == 0 {
		t.Skip("set CDCL_CPU_N")
	}
	reps, _ := strconv.Atoi(os.Getenv("CDCL_CPU_R"))
	reps = max(reps, 1)
	insts := benchInstances(nv, 20)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1 << 62)
	var confl, props int64
	for r := 0; r < reps; r++ {
		confl, props = 0, 0
		t0 := threadCPU()
		for _, cls := range insts {
			s := newWith(nv, cls, Options{})
			s.Solve(context.Background())
			confl += s.Stats().Conflicts
			props += s.Stats().Propagations
		}
		best = min(best, threadCPU()-t0)
	}
	t.Logf("best of %d: %v thread CPU; %d conflicts, %d propagations, %.0f ns/propagation",
		reps, best, confl, props, float64(best.Nanoseconds())/float64(props))
}
