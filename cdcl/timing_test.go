package cdcl

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
)

// TestTiming prints per-instance thread CPU times against gini
// (CDCL_TIMING_N=n, CDCL_TIMING_K=instances, CDCL_TIMING_CAP=gini time cap).
func TestTiming(t *testing.T) {
	nv, _ := strconv.Atoi(os.Getenv("CDCL_TIMING_N"))
	if nv == 0 {
		t.Skip("set CDCL_TIMING_N")
	}
	k, _ := strconv.Atoi(os.Getenv("CDCL_TIMING_K"))
	if k == 0 {
		k = 5
	}
	capGini := 120 * time.Second
	if c, err := time.ParseDuration(os.Getenv("CDCL_TIMING_CAP")); err == nil {
		capGini = c
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var tc, tg time.Duration
	for i, cls := range benchInstances(nv, k) {
		t0 := threadCPU()
		s := newWith(nv, cls, Options{})
		r := s.Solve(context.Background())
		d1 := threadCPU() - t0
		t0 = threadCPU()
		g := gini.NewV(nv + 1)
		for _, c := range cls {
			for _, l := range c {
				g.Add(z.Dimacs2Lit(int(l)))
			}
			g.Add(z.LitNull)
		}
		gr := g.Try(capGini) // 0: gave up after the cap
		d2 := threadCPU() - t0
		tc += d1
		tg += d2
		st := s.Stats()
		t.Logf("%d: %v cdcl %v (confl %d, props %d) gini %v %d", i, r, d1, st.Conflicts, st.Propagations, d2, gr)
	}
	t.Logf("total cdcl %v gini %v", tc, tg)
}
