package acyclic

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/cdcl"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/prune"
)

// TestTheoryMatchesCycleSearch feeds every full assignment of small
// encodings to the theory, literal by literal in a random order, and checks
// that it reports a conflict exactly when the compatible graph of that
// assignment has a cycle (found independently by hyperpolygraph), that each
// conflict clause is false under the assignment, and that undoing restores
// a state in which the next assignment is judged afresh.
func TestTheoryMatchesCycleSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	opts := oracle.DefaultGenOptions()
	checked := map[history.Level]int{}
	conflicts := 0
	for range 3000 {
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			g, viol := hyperpolygraph.Build(h, level, func(history.TxnID) bool { return false })
			if viol != nil {
				continue
			}
			_, reach, conflict, err := prune.Prune(context.Background(), g, prune.Options{})
			require.NoError(t, err)
			if conflict != nil {
				continue
			}
			enc := encode.Encode(g, reach, encode.Options{})
			if enc.NumVars > 10 {
				continue
			}
			th, cyc := New(enc, true)
			require.Nil(t, cyc, "pruned known graphs are acyclic")
			checked[level]++
			for mask := range 1 << enc.NumVars {
				a, ok := assignment(enc, mask)
				if !ok {
					continue // violates an exactly-one clause: never a model
				}
				cyclic := len(g.Resolve(a).FindCycles(1)) > 0
				order := rng.Perm(enc.NumVars)
				var assigned []cdcl.Lit
				var clause []cdcl.Lit
				for _, i := range order {
					l := cdcl.Lit(i + 1)
					if mask&(1<<i) == 0 {
						l = -l
					}
					assigned = append(assigned, l)
					if clause = th.Assign(l); clause != nil {
						break
					}
				}
				require.Equal(t, cyclic, clause != nil, "level %s mask %b\n%s", level, mask, oracle.Format(h))
				if clause != nil {
					conflicts++
					require.NotEmpty(t, clause, "the known graph is acyclic, so a cycle needs a literal")
					for _, l := range clause {
						v := int(l.Var()) - 1
						isTrue := (mask&(1<<v) != 0) == (l > 0)
						require.False(t, isTrue, "conflict clause literal %d is true", l)
					}
				}
				for i := len(assigned) - 1; i >= 0; i-- {
					th.Unassign(assigned[i])
				}
			}
		}
	}
	require.Greater(t, checked[history.SER], 500)
	require.Greater(t, checked[history.SI], 500)
	require.Greater(t, conflicts, 100)
	t.Logf("encodings checked: %v, conflicts verified: %d", checked, conflicts)
}

// assignment decodes mask into an Assignment; ok is false when a read-from
// set does not get exactly one writer.
func assignment(enc *encode.Encoding, mask int) (hyperpolygraph.Assignment, bool) {
	g := enc.G
	a := hyperpolygraph.Assignment{Forward: make([]bool, len(g.WW)), Choice: make([]int32, len(g.WR))}
	for i := range g.WW {
		a.Forward[i] = mask&(1<<(enc.WWVar[i]-1)) != 0
	}
	for i, s := range g.WR {
		n := 0
		for j := range s.Cands {
			if mask&(1<<(enc.WRBase[i]+int32(j)-1)) != 0 {
				a.Choice[i] = int32(j)
				n++
			}
		}
		if n != 1 {
			return a, false
		}
	}
	return a, true
}
