package acyclic

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/cdcl"
	"github.com/hyperiso/hyperiso/cnf"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// TestWritersMatchAllWriters is the differential test of keeping, for SER
// and SI, only the writers a variable's edge leaves: on random histories
// (default and duplicate-value ones) the theory must answer every step of
// a random walk of assignments and backtracks exactly as the theory that
// keeps every writer (allWritersForTest) does, with the same conflict
// clauses and cycles, each cycle a closed chain of edges; and CDCL solving
// with either must reach the same verdict.
func TestWritersMatchAllWriters(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	walks, conflicts, unsat := 0, 0, 0
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
			allWritersForTest = true
			ref, cyc := New(enc, pol)
			allWritersForTest = false
			require.Nil(t, cyc)
			th, cyc := New(enc, pol)
			require.Nil(t, cyc)
			walks++

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
				require.Equal(t, want, got, "level %s\n%s", level, oracle.Format(h))
				if got != nil {
					conflicts++
					require.Equal(t, ref.Cycle, th.Cycle)
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
			allWritersForTest = true
			ref, _ = New(enc, pol)
			allWritersForTest = false
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
	t.Logf("walks: %d, conflicts compared: %d, unsatisfiable: %d", walks, conflicts, unsat)
}
