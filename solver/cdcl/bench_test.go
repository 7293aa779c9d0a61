package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// benchInstances returns k random 3-SAT instances with n variables at ratio
// 4.26, the same for every run.
func benchInstances(n, k int) [][][]cnf.Lit {
	r := rand.New(rand.NewPCG(uint64(n), 426))
	out := make([][][]cnf.Lit, k)
	for i := range out {
		out[i] = random3SAT(r, n, int(4.26*float64(n)))
	}
	return out
}

const benchK = 5

// Benchmark3SAT solves benchK random 3-SAT instances per size at ratio 4.26,
// one sub-benchmark per instance and solver (this one, with its conflicts
// and propagations, and gini). gini can take minutes on some n ≥ 250
// instances; run with -benchtime=1x.
func Benchmark3SAT(b *testing.B) {
	for _, n := range []int{200, 250, 300} {
		for i, cls := range benchInstances(n, benchK) {
			b.Run(fmt.Sprintf("n=%d/i=%d/cdcl", n, i), func(b *testing.B) {
				var st Stats
				for b.Loop() {
					s := newWith(n, cls, Options{})
					if s.Solve(context.Background()) == Unknown {
						b.Fatal("unknown")
					}
					st = s.Stats()
				}
				b.ReportMetric(float64(st.Conflicts), "conflicts")
				b.ReportMetric(float64(st.Propagations), "propagations")
			})
			b.Run(fmt.Sprintf("n=%d/i=%d/gini", n, i), func(b *testing.B) {
				for b.Loop() {
					g := gini.NewV(n + 1)
					for _, c := range cls {
						for _, l := range c {
							g.Add(z.Dimacs2Lit(int(l)))
						}
						g.Add(z.LitNull)
					}
					g.Solve()
				}
			})
		}
	}
}

// BenchmarkSmall solves a fixed set of n=150 instances (a quick,
// stable measure of the propagation engine for tuning).
func BenchmarkSmall(b *testing.B) {
	benchSolveAll(b, 150, benchInstances(150, 20), Options{})
}

// BenchmarkVariants solves a fixed set of n=150 instances under each solver
// configuration (a tuning aid): compare a variant's cpu-ns/op and
// conflicts/op with those of default.
func BenchmarkVariants(b *testing.B) {
	insts := benchInstances(150, 10)
	for _, v := range []struct {
		name string
		opt  Options
	}{
		{"default", Options{}},
		{"luby", Options{Restarts: RestartLuby}},
		{"luby+activity", Options{Restarts: RestartLuby, Reduce: ReduceActivity}},
		{"glucose+activity", Options{Reduce: ReduceActivity}},
		{"no-phase", Options{NoPhaseSaving: true}},
		{"no-minimize", Options{NoMinimize: true}},
		{"no-reuse", Options{NoReuseTrail: true}},
		{"seed=1", Options{Seed: 1}},
	} {
		b.Run(v.name, func(b *testing.B) { benchSolveAll(b, 150, insts, v.opt) })
	}
}

// benchSolveAll solves every instance once per op and reports, beside the
// wall time, the CPU time of the solving thread (steadier on a shared
// machine; wall time where the thread's CPU time is not available), the
// conflicts and propagations of one op, and the CPU time per propagation.
func benchSolveAll(b *testing.B, n int, insts [][][]cnf.Lit, opt Options) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	var ops, confl, props int64
	for b.Loop() {
		confl, props = 0, 0
		t0 := threadCPU()
		for _, cls := range insts {
			s := newWith(n, cls, opt)
			if s.Solve(context.Background()) == Unknown {
				b.Fatal("unknown")
			}
			st := s.Stats()
			confl += st.Conflicts
			props += st.Propagations
		}
		cpu += threadCPU() - t0
		ops++
	}
	perOp := float64(cpu.Nanoseconds()) / float64(ops)
	b.ReportMetric(perOp, "cpu-ns/op")
	b.ReportMetric(float64(confl), "conflicts/op")
	b.ReportMetric(float64(props), "propagations/op")
	b.ReportMetric(perOp/float64(max(props, 1)), "cpu-ns/propagation")
}
