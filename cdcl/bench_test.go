package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/hyperiso/hyperiso/cnf"
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
// one sub-benchmark per instance and solver (this one and gini). gini can
// take minutes on some n ≥ 250 instances; run with -benchtime=1x.
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
	insts := benchInstances(150, 20)
	for b.Loop() {
		for _, cls := range insts {
			s := newWith(150, cls, Options{})
			s.Solve(context.Background())
		}
	}
}
