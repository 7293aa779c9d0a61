package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// TestAssumptionsDifferential: random formulas under random assumptions;
// answers agree with gini, models respect the assumptions, and failed
// assumptions are a subset that gini confirms unsatisfiable.
func TestAssumptionsDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	count := 1500
	if testing.Short() {
		count = 200
	}
	nsat, nfail := 0, 0
	for i := 0; i < count; i++ {
		n := 20 + r.IntN(100)
		cls := random3SAT(r, n, int((3.0+1.3*r.Float64())*float64(n)))
		s := newWith(n, cls, optionVariants[i%len(optionVariants)])
		if i%2 == 0 {
			fastReduce(s)
		}
		// Several solves under different assumptions on the same solver.
		for round := 0; round < 4; round++ {
			k := 1 + r.IntN(25)
			assume := make([]cnf.Lit, k)
			for j := range assume {
				assume[j] = cnf.Lit(1 + r.IntN(n))
				if r.IntN(2) == 0 {
					assume[j] = -assume[j]
				}
			}
			if round == 3 { // many duplicates: more levels than variables
				for len(assume) < 3*n {
					assume = append(assume, assume...)
				}
			}
			res := s.SolveAssuming(context.Background(), assume)
			want := giniSolve(n, cls, assume)
			msg := fmt.Sprintf("instance %d round %d", i, round)
			if want {
				nsat++
				require.Equal(t, Sat, res, msg)
				requireModel(t, s, cls, msg)
				for _, a := range assume {
					require.Equal(t, a.IsPos(), s.Value(a.Var()), msg)
				}
				continue
			}
			require.Equal(t, Unsat, res, msg)
			failed := s.FailedAssumptions()
			for _, f := range failed {
				require.Contains(t, assume, f, msg)
			}
			require.False(t, giniSolve(n, cls, failed), msg)
			if len(failed) < len(assume) {
				nfail++
			}
		}
		// And without assumptions, the plain answer.
		require.Equal(t, giniSolve(n, cls, nil), s.Solve(context.Background()) == Sat)
	}
	t.Logf("%d solves SAT, %d with a strict failed subset", nsat, nfail)
}

// TestIncrementalDifferential adds clauses in chunks between solves and
// compares with an incremental gini.
func TestIncrementalDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	count := 400
	if testing.Short() {
		count = 60
	}
	for i := 0; i < count; i++ {
		n := 30 + r.IntN(90)
		all := random3SAT(r, n, int(4.8*float64(n)))
		// Sprinkle some binary and unit clauses.
		for j := 0; j < n/10; j++ {
			all = append(all, random3SAT(r, n, 1)[0][:1+r.IntN(2)])
		}
		r.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
		s := New(n/2, optionVariants[i%len(optionVariants)]) // variables grow on demand
		if i%2 == 0 {
			fastReduce(s)
		}
		g := gini.NewV(n + 1)
		added := 0
		for added < len(all) {
			chunk := min(len(all)-added, 1+r.IntN(len(all)/5))
			for _, c := range all[added : added+chunk] {
				s.AddClause(c)
				for _, l := range c {
					g.Add(z.Dimacs2Lit(int(l)))
				}
				g.Add(z.LitNull)
			}
			added += chunk
			res := s.Solve(context.Background())
			want := g.Solve() == 1
			msg := fmt.Sprintf("instance %d after %d clauses", i, added)
			require.Equal(t, want, res == Sat, msg)
			if want {
				requireModel(t, s, all[:added], msg)
			} else {
				break
			}
		}
	}
}

// php adds the pigeon-hole formula: p pigeons, h holes.
func php(p, h int) [][]cnf.Lit {
	v := func(i, j int) cnf.Lit { return cnf.Lit(i*h + j + 1) }
	var cls [][]cnf.Lit
	for i := 0; i < p; i++ {
		c := make([]cnf.Lit, h)
		for j := range c {
			c[j] = v(i, j)
		}
		cls = append(cls, c)
	}
	for j := 0; j < h; j++ {
		for a := 0; a < p; a++ {
			for b := a + 1; b < p; b++ {
				cls = append(cls, []cnf.Lit{-v(a, j), -v(b, j)})
			}
		}
	}
	return cls
}

func TestPigeonHole(t *testing.T) {
	top := 8
	if testing.Short() {
		top = 7
	}
	for h := 1; h <= top; h++ {
		for _, opt := range optionVariants[:3] {
			t0 := time.Now()
			s := newWith((h+1)*h, php(h+1, h), opt)
			require.Equal(t, Unsat, s.Solve(context.Background()), "PHP(%d,%d)", h+1, h)
			if h == top {
				t.Logf("PHP(%d,%d) %+v: %v, %d conflicts", h+1, h, opt.Restarts, time.Since(t0), s.Stats().Conflicts)
			}
		}
		cls := php(h, h)
		s := newWith(h*h, cls, Options{})
		require.Equal(t, Sat, s.Solve(context.Background()), "PHP(%d,%d)", h, h)
		requireModel(t, s, cls)
	}
}

func TestCancellation(t *testing.T) {
	cls := php(12, 11)
	s := newWith(12*11, cls, Options{})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, Unknown, s.Solve(ctx))

	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	require.Equal(t, Unknown, s.Solve(ctx))
	require.Less(t, time.Since(t0), 2*time.Second)
	require.Zero(t, s.decisionLevel())

	// Still usable: an easy formula on a fresh part of the solver.
	s2 := newWith(12*11, cls, Options{ConflictLimit: 50})
	require.Equal(t, Unknown, s2.Solve(context.Background()))
	require.Equal(t, int64(50), s2.Stats().Conflicts)

	r := rand.New(rand.NewPCG(1, 99))
	small := random3SAT(r, 30, 90)
	s3 := newWith(30, small, Options{})
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	<-ctx.Done()
	require.Equal(t, Unknown, s3.Solve(ctx))
	cancel()
	res := s3.Solve(context.Background())
	require.Equal(t, giniSolve(30, small, nil), res == Sat)
	if res == Sat {
		requireModel(t, s3, small)
	}
}

// TestSatStateKept: after Sat the solver keeps the assignment (for the
// theory) until the next call, and the model survives backtracking.
func TestSatStateKept(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	cls := random3SAT(r, 40, 120)
	th := newCubeTheory(t, 40, nil, r)
	th.view = make([]int8, 44) // room for the variables created below
	s := newWith(40, cls, Options{Theory: th})
	th.s = s
	require.Equal(t, Sat, s.Solve(context.Background()))
	require.Len(t, th.stack, 40)
	model := s.Model()
	s.AddClause([]cnf.Lit{41}) // new variable: backtracks first
	require.Equal(t, 41, s.NumVars())
	require.Len(t, th.stack, s.thead)
	require.Nil(t, s.Model())
	require.Equal(t, Sat, s.Solve(context.Background()))
	require.True(t, s.Value(41))
	require.Len(t, th.stack, 41)
	require.True(t, satisfies(cls, func(v int32) bool { return model[v-1] }))
	require.Equal(t, int32(42), s.NewVar())
	s.SetPhase(43, true) // creates variable 43, unconstrained
	require.Equal(t, Sat, s.Solve(context.Background()))
	require.True(t, s.Value(43))
	s.SetPhase(43, false)
	require.Equal(t, Sat, s.Solve(context.Background()))
	require.False(t, s.Value(43))
	require.Equal(t, "SAT", Sat.String())
	require.Equal(t, cnf.Lit(-3), cnf.Lit(3).Not())
	require.Equal(t, "-3", fmt.Sprint(toLit(-3)))
	_ = slices.Clone(cls)
}
