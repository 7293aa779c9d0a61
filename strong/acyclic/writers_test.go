package acyclic

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// TestTheoryMatchesUnreduced is the differential test of what SER's and
// SI's theory holds against the theory before it, which kept every writer
// (allWritersForTest) and every known arc (noReduceForTest): on random
// histories (default and duplicate-value ones) the theory must find a
// conflict at the same steps of a random walk of assignments and
// backtracks, each conflict clause false under the assignment and each
// cycle a closed chain of edges; and CDCL solving with either must reach
// the same verdict. With the reduction off the two must agree exactly.
func TestTheoryMatchesUnreduced(t *testing.T) {
	for _, reduce := range []bool{true, false} {
		t.Run(map[bool]string{true: "reduced", false: "writers"}[reduce], func(t *testing.T) {
			matchUnreduced(t, reduce)
		})
	}
}

func matchUnreduced(t *testing.T, reduce bool) {
	defer func() { allWritersForTest, noReduceForTest = false, false }()
	old := func(enc *encode.Encoding, pol Polarity) (*Theory, []hyperpolygraph.Edge) {
		allWritersForTest, noReduceForTest = true, true
		defer func() { allWritersForTest, noReduceForTest = false, !reduce }()
		return New(enc, pol)
	}
	noReduceForTest = !reduce
	rng := rand.New(rand.NewPCG(41, 43))
	walks, conflicts, unsat, dropped := 0, 0, 0, int64(0)
	for i := range 4000 {
		opts := oracle.DefaultGenOptions()
		if i%2 == 1 {
			opts = oracle.DupGenOptions()
		}
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			_, enc := encodeSmall(t, h, level)
			if enc == nil || enc.NumVars == 0 {
				continue
			}
			pol := Polarity(rng.IntN(3))
			ref, cyc := old(enc, pol)
			require.Nil(t, cyc)
			th, cyc := New(enc, pol)
			require.Nil(t, cyc)
			walks++
			dropped += th.KnownArcsDropped

			var stack []cnf.Lit
			assigned := make([]bool, enc.NumVars+1)
			for range 4 * enc.NumVars {
				if len(stack) > 0 && rng.IntN(4) == 0 {
					// Backtrack a random suffix.
					for k := rng.IntN(len(stack)) + 1; k > 0; k-- {
						l := stack[len(stack)-1]
						stack = stack[:len(stack)-1]
						ref.Unassign(l)
						th.Unassign(l)
						assigned[l.Var()] = false
					}
					continue
				}
				v := cnf.Lit(rng.IntN(enc.NumVars) + 1)
				if assigned[v] {
					continue
				}
				l := v
				if rng.IntN(2) == 0 {
					l = -l
				}
				want, got := ref.Assign(l), th.Assign(l)
				require.Equal(t, want != nil, got != nil, "level %s\n%s", level, oracle.Format(h))
				if !reduce {
					require.Equal(t, want, got)
					require.Equal(t, ref.Cycle, th.Cycle)
				}
				if got != nil {
					conflicts++
					for _, c := range got {
						require.True(t, c == -l || slices.Contains(stack, -c), "clause literal %d is not false", c)
					}
					c := th.Cycle
					require.NotEmpty(t, c)
					for j, e := range c {
						require.Equal(t, e.To, c[(j+1)%len(c)].From, "cycle %v is not closed", c)
					}
					ref.Unassign(l)
					th.Unassign(l)
					continue
				}
				stack = append(stack, l)
				assigned[l.Var()] = true
			}
			for len(stack) > 0 {
				l := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				ref.Unassign(l)
				th.Unassign(l)
			}

			// Whole solves from fresh theories.
			ref, _ = old(enc, pol)
			th, _ = New(enc, pol)
			var verdicts [2]cdcl.Result
			for k, x := range []*Theory{ref, th} {
				s := cdcl.New(enc.NumVars, cdcl.Options{Theory: x})
				for _, c := range enc.Clauses {
					if !s.AddClause(c) {
						break
					}
				}
				verdicts[k] = s.Solve(context.Background())
			}
			require.Equal(t, verdicts[0], verdicts[1], "level %s\n%s", level, oracle.Format(h))
			if verdicts[1] == cdcl.Unsat {
				unsat++
			}
		}
	}
	require.Greater(t, walks, 2000)
	require.Greater(t, conflicts, 500)
	require.Greater(t, unsat, 3)
	if reduce {
		require.Greater(t, dropped, int64(1000))
	}
	t.Logf("walks: %d, conflicts compared: %d, unsatisfiable: %d, known arcs dropped: %d", walks, conflicts, unsat, dropped)
}
