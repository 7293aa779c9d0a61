package acyclic

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
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
			g, enc := encodeSmall(t, h, level)
			if enc == nil || enc.NumVars > 10 {
				continue
			}
			th, cyc := New(enc, Polarity(rng.IntN(3)))
			require.Nil(t, cyc, "pruned known graphs are acyclic")
			checked[level]++
			for mask := range 1 << enc.NumVars {
				a, ok := assignment(enc, mask)
				if !ok {
					continue // violates an exactly-one clause: never a model
				}
				cyclic := len(g.Resolve(a).FindCycles(1)) > 0
				order := rng.Perm(enc.NumVars)
				var assigned []cnf.Lit
				var clause []cnf.Lit
				for _, i := range order {
					l := cnf.Lit(i + 1)
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

// encodeSmall builds, prunes and encodes h at level; enc is nil when the
// history is already rejected by building or pruning.
func encodeSmall(t *testing.T, h *history.History, level history.Level) (*hyperpolygraph.Graph, *encode.Encoding) {
	g, viol := hyperpolygraph.Build(h, level, func(history.TxnID) bool { return false })
	if viol != nil {
		return g, nil
	}
	_, reach, conflict, err := prune.Prune(context.Background(), g, prune.Options{})
	require.NoError(t, err)
	if conflict != nil {
		return g, nil
	}
	return g, encode.Encode(g, reach, encode.Options{})
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

// TestPhaseFollowsOrder checks the polarity rules on random small encodings
// under random partial assignments: write-write decisions agree with the
// order in both modes; under OrderPolarity a read-from candidate is chosen
// iff its writer precedes the reader; under LatestWriterPolarity, of the
// candidates not ruled out, exactly the latest writer preceding the reader
// is chosen (none if no writer precedes it).
func TestPhaseFollowsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	opts := oracle.DefaultGenOptions()
	sets, withWriter := 0, 0
	for range 5000 {
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			g, enc := encodeSmall(t, h, level)
			if enc == nil || len(g.WR) == 0 {
				continue
			}
			for _, pol := range []Polarity{OrderPolarity, LatestWriterPolarity} {
				th, cyc := New(enc, pol)
				require.Nil(t, cyc)
				// Assign a random prefix of literals, stopping before a conflict.
				var assigned []cnf.Lit
				for _, i := range rng.Perm(enc.NumVars)[:rng.IntN(enc.NumVars+1)] {
					l := cnf.Lit(i + 1)
					if rng.IntN(2) == 0 {
						l = -l
					}
					if th.Assign(l) != nil {
						th.Unassign(l)
						break
					}
					assigned = append(assigned, l)
				}
				for i, p := range g.WW {
					pos, ok := th.Phase(enc.WWVar[i])
					require.True(t, ok)
					require.Equal(t, th.level(p.A) < th.level(p.B), pos)
				}
				for i, s := range g.WR {
					lr := th.level(s.Reader)
					latest, chosen := -1, 0
					for j, c := range s.Cands {
						v := enc.WRBase[i] + int32(j)
						pos, ok := th.Phase(v)
						require.True(t, ok)
						before := th.level(c) < lr
						if pol == OrderPolarity {
							require.Equal(t, before, pos)
							continue
						}
						if th.value[v] == -1 {
							continue // ruled out: its own answer does not matter
						}
						if pos {
							chosen++
							require.True(t, before, "a candidate after the reader was chosen")
						}
						if before && (latest < 0 || th.level(c) > th.level(s.Cands[latest])) {
							latest = j
						}
					}
					if pol == LatestWriterPolarity {
						sets++
						want := 0
						if latest >= 0 {
							want = 1
							withWriter++
							pos, _ := th.Phase(enc.WRBase[i] + int32(latest))
							require.True(t, pos, "the latest preceding writer was not chosen")
						}
						require.Equal(t, want, chosen, "candidates chosen in one read-from set")
					}
				}
				for i := len(assigned) - 1; i >= 0; i-- {
					th.Unassign(assigned[i])
				}
			}
		}
	}
	require.Greater(t, withWriter, 500)
	require.Greater(t, sets-withWriter, 100)
	t.Logf("read-from sets checked: %d, %d with a preceding writer", sets, withWriter)
}
