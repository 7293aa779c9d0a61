package cdcl

import (
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// random3SAT returns m random 3-clauses over n variables (distinct
// variables per clause).
func random3SAT(r *rand.Rand, n, m int) [][]cnf.Lit {
	cls := make([][]cnf.Lit, m)
	for i := range cls {
		var c [3]cnf.Lit
		for k := 0; k < 3; k++ {
		again:
			v := cnf.Lit(r.IntN(n) + 1)
			for _, u := range c[:k] {
				if u.Var() == int32(v) {
					goto again
				}
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			c[k] = v
		}
		cls[i] = c[:]
	}
	return cls
}

// giniSolve solves clauses (plus assumptions as units) with gini.
func giniSolve(n int, cls [][]cnf.Lit, assumptions []cnf.Lit) bool {
	g := gini.NewV(n + 1)
	for _, c := range cls {
		for _, l := range c {
			g.Add(z.Dimacs2Lit(int(l)))
		}
		g.Add(z.LitNull)
	}
	for _, l := range assumptions {
		g.Add(z.Dimacs2Lit(int(l)))
		g.Add(z.LitNull)
	}
	return g.Solve() == 1
}

// newWith builds a solver holding cls.
func newWith(n int, cls [][]cnf.Lit, opt Options) *Solver {
	s := New(n, opt)
	for _, c := range cls {
		s.AddClause(c)
	}
	return s
}

// satisfies reports whether the model value(v) satisfies every clause.
func satisfies(cls [][]cnf.Lit, value func(v int32) bool) bool {
	for _, c := range cls {
		ok := false
		for _, l := range c {
			if value(l.Var()) == l.IsPos() {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func requireModel(t testing.TB, s *Solver, cls [][]cnf.Lit, msg ...any) {
	t.Helper()
	require.True(t, satisfies(cls, s.Value), msg...)
}

// fastReduce makes reduction and compaction happen after few conflicts.
func fastReduce(s *Solver) {
	s.compactMin = 64
	s.reduceInterval = 30
	s.nextReduce = 30
}

// optionVariants are the configurations the differential tests rotate
// through.
var optionVariants = []Options{
	{},
	{Restarts: RestartLuby},
	{Restarts: RestartLuby, Reduce: ReduceActivity, Seed: 7},
	{Restarts: RestartNone, Reduce: ReduceNone, NoPhaseSaving: true},
	{Seed: 3, RandomVarFreq: 0.05, NoMinimize: true},
	{Reduce: ReduceActivity, LubyUnit: 10, Restarts: RestartLuby},
	{NoReuseTrail: true, LubyUnit: 5, Restarts: RestartLuby},
	{Chrono: 1},
	{Chrono: 1, Restarts: RestartLuby, LubyUnit: 5, Seed: 5},
	{Chrono: 2, Restarts: RestartNone, NoMinimize: true, Reduce: ReduceActivity},
}
