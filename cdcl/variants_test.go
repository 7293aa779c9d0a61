package cdcl

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestVariants compares solver configurations on the benchmark instances
// (CDCL_VARIANTS_N=n, CDCL_VARIANTS_K=k); a tuning aid, skipped by default.
func TestVariants(t *testing.T) {
	nv, _ := strconv.Atoi(os.Getenv("CDCL_VARIANTS_N"))
	if nv == 0 {
		t.Skip("set CDCL_VARIANTS_N")
	}
	k, _ := strconv.Atoi(os.Getenv("CDCL_VARIANTS_K"))
	if k == 0 {
		k = 10
	}
	insts := benchInstances(nv, k)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	variants := map[string]Options{
		"default":          {},
		"luby":             {Restarts: RestartLuby},
		"luby+activity":    {Restarts: RestartLuby, Reduce: ReduceActivity},
		"glucose+activity": {Reduce: ReduceActivity},
		"no-phase":         {NoPhaseSaving: true},
		"no-minimize":      {NoMinimize: true},
		"no-reuse":         {NoReuseTrail: true},
		"seed=1":           {Seed: 1},
	}
	for name, opt := range variants {
		var d time.Duration
		var confl, props int64
		for _, cls := range insts {
			t0 := threadCPU()
			s := newWith(nv, cls, opt)
			s.Solve(context.Background())
			d += threadCPU() - t0
			confl += s.Stats().Conflicts
			props += s.Stats().Propagations
		}
		t.Logf("%-18s %8.2fs conflicts %9d props %11d", name, d.Seconds(), confl, props)
	}
}
