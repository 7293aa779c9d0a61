package acyclic

import (
	"context"
	"math/rand/v2"
	"slices"
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
			th, cyc := New(enc, Options{Polarity: true})
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

// TestPropagationIsSound drives the theory with propagation on through
// random partial assignments of small encodings and checks every
// implication clause against the independent cycle search: each full
// assignment that makes all of its literals false has a cyclic compatible
// graph. With an unbounded budget it also checks completeness for the
// literals' own edges: an unassigned literal whose edge would close a cycle
// has been implied false.
func TestPropagationIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	opts := oracle.DefaultGenOptions()
	implications, complete := 0, 0
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
			if enc.NumVars > 10 || enc.NumVars == 0 {
				continue
			}
			// cyclic[mask] is 1 for a cyclic model, 0 for an acyclic one and
			// -1 when the mask is not a model of the exactly-one clauses.
			cyclic := make([]int8, 1<<enc.NumVars)
			for mask := range cyclic {
				a, ok := assignment(enc, mask)
				switch {
				case !ok:
					cyclic[mask] = -1
				case len(g.Resolve(a).FindCycles(1)) > 0:
					cyclic[mask] = 1
				}
			}
			budget := []int{1, 2, 3, 1 << 20}[rng.IntN(4)]
			th, cyc := New(enc, Options{Polarity: true, PropBudget: budget})
			require.Nil(t, cyc)
			for range 4 {
				mask := rng.IntN(len(cyclic))
				order := rng.Perm(enc.NumVars)[:1+rng.IntN(enc.NumVars)]
				var assigned []cdcl.Lit
				implied := map[cdcl.Lit]bool{}
				for _, i := range order {
					l := cdcl.Lit(i + 1)
					if mask&(1<<i) == 0 {
						l = -l
					}
					assigned = append(assigned, l)
					if th.Assign(l) != nil {
						break
					}
					for cl := th.Propagate(); cl != nil; cl = th.Propagate() {
						implications++
						require.Zero(t, th.value[cl[0].Var()], "implied literal %d is assigned", cl[0])
						implied[cl[0]] = true
						for _, l := range cl[1:] {
							want := int8(1) // l false: its variable is true when l is negative
							if l > 0 {
								want = -1
							}
							require.Equal(t, want, th.value[l.Var()], "implication %v: literal %d is not false", cl, l)
						}
						for m, c := range cyclic {
							if c == 0 && falsifies(m, cl) {
								t.Fatalf("level %s: implication %v is false in acyclic model %b\n%s", level, cl, m, oracle.Format(h))
							}
						}
					}
					if budget > 1000 {
						complete++
						for _, l := range th.closing() {
							require.True(t, implied[-l], "level %s: literal %d closes a cycle but was not implied false\n%s", level, l, oracle.Format(h))
						}
					}
				}
				for i := len(assigned) - 1; i >= 0; i-- {
					th.Unassign(assigned[i])
				}
			}
		}
	}
	require.Greater(t, implications, 1000)
	require.Greater(t, complete, 1000)
	t.Logf("implications verified: %d, completeness checks: %d", implications, complete)
}

// falsifies reports whether every literal of cl is false under mask.
func falsifies(mask int, cl []cdcl.Lit) bool {
	for _, l := range cl {
		if (mask&(1<<(l.Var()-1)) != 0) == (l > 0) {
			return false
		}
	}
	return true
}

// closing lists the unassigned literals one of whose own arcs x→y would
// close a cycle in the theory's current graph.
func (t *Theory) closing() []cdcl.Lit {
	var out []cdcl.Lit
	for x, arcs := range t.cands {
		for _, a := range arcs {
			if t.value[a.lit.Var()] == 0 && t.pk.Reaches(a.to, int32(x)) && !slices.Contains(out, a.lit) {
				out = append(out, a.lit)
			}
		}
	}
	return out
}
