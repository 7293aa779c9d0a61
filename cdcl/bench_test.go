package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
)

// benchInstances returns k random 3-SAT instances with n variables at ratio
// 4.26, the same for every run.
func benchInstances(n, k int) [][][]Lit {
	r := rand.New(rand.NewPCG(uint64(n), 426))
	out := make([][][]Lit, k)
	for i := range out {
		out[i] = random3SAT(r, n, int(4.26*float64(n)))
	}
	return out
}

const benchK = 10

// Benchmark3SAT solves benchK random 3-SAT instances per iteration with this
// solver and with gini.
func Benchmark3SAT(b *testing.B) {
	for _, n := range []int{200, 250, 300} {
		insts := benchInstances(n, benchK)
		b.Run(fmt.Sprintf("cdcl/n=%d", n), func(b *testing.B) {
			var confl int64
			for b.Loop() {
				confl = 0
				for _, cls := range insts {
					s := newWith(n, cls, Options{})
					if s.Solve(context.Background()) == Unknown {
						b.Fatal("unknown")
					}
					confl += s.Stats().Conflicts
				}
			}
			b.ReportMetric(float64(confl)/benchK, "conflicts/inst")
		})
		b.Run(fmt.Sprintf("gini/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				for _, cls := range insts {
					g := gini.NewV(n + 1)
					for _, c := range cls {
						for _, l := range c {
							g.Add(z.Dimacs2Lit(int(l)))
						}
						g.Add(z.LitNull)
					}
					g.Solve()
				}
			}
		})
	}
}
