package cdcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

func TestTrivial(t *testing.T) {
	s := New(3, Options{})
	require.True(t, s.AddClause([]cnf.Lit{1, 2}))
	require.True(t, s.AddClause([]cnf.Lit{-1, 2}))
	require.True(t, s.AddClause([]cnf.Lit{-2, 3, 3}))
	require.True(t, s.AddClause([]cnf.Lit{1, -1})) // tautology
	require.Equal(t, Sat, s.Solve(context.Background()))
	require.True(t, s.Value(2))
	require.True(t, s.Value(3))
	require.False(t, s.AddClause([]cnf.Lit{-3}))
	require.Equal(t, Unsat, s.Solve(context.Background()))
	require.False(t, s.AddClause([]cnf.Lit{1}))

	e := New(0, Options{})
	require.Equal(t, Sat, e.Solve(context.Background()))
	require.False(t, e.AddClause(nil))
	require.Equal(t, Unsat, e.Solve(context.Background()))
	require.Panics(t, func() { New(1, Options{}).AddClause([]cnf.Lit{0}) })
}

// TestRandom3SATDifferential compares with gini on random 3-SAT around the
// threshold, checking every model.
func TestRandom3SATDifferential(t *testing.T) {
	count := 3000
	if testing.Short() {
		count = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	nsat := 0
	var tot statTotals
	for i := 0; i < count; i++ {
		n := 20 + r.IntN(131)
		ratio := 3.8 + 0.8*r.Float64()
		cls := random3SAT(r, n, int(ratio*float64(n)))
		opt := optionVariants[i%len(optionVariants)]
		s := newWith(n, cls, opt)
		if i%2 == 0 {
			fastReduce(s)
		}
		res := s.Solve(context.Background())
		tot.add(s.Stats())
		want := giniSolve(n, cls, nil)
		msg := fmt.Sprintf("instance %d n=%d m=%d opt=%d", i, n, len(cls), i%len(optionVariants))
		if want {
			nsat++
			require.Equal(t, Sat, res, msg)
			requireModel(t, s, cls, msg)
		} else {
			require.Equal(t, Unsat, res, msg)
		}
	}
	t.Logf("%d instances, %d SAT; %s", count, nsat, tot)
	// The variants with Options.Chrono backtrack chronologically.
	require.Positive(t, tot.chrono, "no chronological backtrack")
}
