package acyclic

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// TestPSITheory feeds every full assignment of small PSI encodings to the
// theory, literal by literal in a random order. After each literal, the
// graph those literals give (derived here independently: known edges, the
// edges of true literals, and an RW edge from each reader of a version to
// each writer ordered after it) is checked by brute force for a cycle in
// SO ∪ WR ∪ WW or an RW edge whose head reaches its tail. With the default
// budget (never exhausted on these graphs) the theory must report a
// conflict exactly when there is one; with budget 0 it may wait, but must
// have reported one by the full assignment exactly when
// Compatible.FindPSICycles finds a cycle. Each conflict clause must be
// false under the literals assigned so far, and the theory's cycle must be
// a closed cycle of edges of that graph with at most one RW edge.
func TestPSITheory(t *testing.T) {
	defer func(b int) { PSIBudget = b }(PSIBudget)
	for _, budget := range []int{PSIBudget, 0} {
		t.Run(fmt.Sprintf("budget=%d", budget), func(t *testing.T) {
			PSIBudget = budget
			testPSITheory(t, budget > 0)
		})
	}
}

func testPSITheory(t *testing.T, eager bool) {
	rng := rand.New(rand.NewPCG(31, 7))
	opts := oracle.DupGenOptions()
	opts.PUnknown = 0
	checked, conflicts, early, knownBroken := 0, 0, 0, 0
	for range 2000 {
		h := oracle.Generate(rng, opts)
		g, viol := hyperpolygraph.Build(h, history.SER, func(history.TxnID) bool { return false })
		if viol != nil {
			continue
		}
		hyperpolygraph.PruneMixed(g)
		enc := encode.Encode(g, nil, encode.Options{})
		if enc.NumVars > 10 {
			continue
		}
		th, cyc := NewPSI(enc, LatestWriterPolarity)
		if cyc != nil {
			// Every assignment has the cycle of known edges.
			knownBroken++
			requirePSICycle(t, cyc, psiEdges(enc, nil))
			continue
		}
		checked++
		for mask := range 1 << enc.NumVars {
			a, ok := assignment(enc, mask)
			if !ok {
				continue
			}
			forbidden := len(g.Resolve(a).FindPSICycles(1)) > 0
			var assigned []cnf.Lit
			var clause []cnf.Lit
			for _, i := range rng.Perm(enc.NumVars) {
				l := cnf.Lit(i + 1)
				if mask&(1<<i) == 0 {
					l = -l
				}
				assigned = append(assigned, l)
				clause = th.Assign(l)
				if !eager && clause == nil {
					continue
				}
				edges := psiEdges(enc, assigned)
				broken := psiBroken(g.N(), edges)
				if eager {
					require.Equal(t, broken, clause != nil, "after %v\n%s", assigned, oracle.Format(h))
				}
				if clause != nil {
					require.True(t, broken, "a conflict where the graph has no forbidden cycle")
					requirePSICycle(t, th.Cycle, edges)
					isTrue := map[cnf.Lit]bool{}
					for _, l := range assigned {
						isTrue[l] = true
					}
					require.NotEmpty(t, clause)
					for _, l := range clause {
						require.True(t, isTrue[-l], "conflict clause literal %d is not false", l)
					}
					if len(assigned) < enc.NumVars {
						early++
					}
					break
				}
			}
			require.Equal(t, forbidden, clause != nil, "mask %b\n%s", mask, oracle.Format(h))
			if clause != nil {
				conflicts++
			}
			for i := len(assigned) - 1; i >= 0; i-- {
				th.Unassign(assigned[i])
			}
		}
	}
	require.Greater(t, checked, 500)
	require.Greater(t, conflicts, 500)
	require.Positive(t, knownBroken)
	if eager {
		require.Greater(t, early, 100)
	}
	t.Logf("encodings: %d (%d refuted by known edges), conflicts: %d (%d before the full assignment)", checked, knownBroken, conflicts, early)
}

// psiEdges derives, independently of the theory, the edges that the known
// graph and the literals assigned give: G's edges and the RW edges from
// each reader of a version to each writer ordered after it.
func psiEdges(enc *encode.Encoding, assigned []cnf.Lit) []hyperpolygraph.Edge {
	g := enc.G
	edges := append([]hyperpolygraph.Edge(nil), g.Known...)
	for _, l := range assigned {
		if i, ok := enc.IsWW(int32(l.Var())); ok {
			p := g.WW[i]
			e := hyperpolygraph.Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key}
			if l < 0 {
				e.From, e.To = e.To, e.From
			}
			edges = append(edges, e)
		} else if set, cand, ok := enc.WRSet(int32(l.Var())); ok && l > 0 {
			s := g.WR[set]
			edges = append(edges, hyperpolygraph.Edge{From: s.Cands[cand], To: s.Reader, Rel: history.WR, Key: s.Key})
		}
	}
	var rw []hyperpolygraph.Edge
	for _, wr := range edges {
		if wr.Rel != history.WR {
			continue
		}
		for _, ww := range edges {
			if ww.Rel == history.WW && ww.Key == wr.Key && ww.From == wr.From && ww.To != wr.To {
				rw = append(rw, hyperpolygraph.Edge{From: wr.To, To: ww.To, Rel: history.RW, Key: wr.Key})
			}
		}
	}
	return append(edges, rw...)
}

// psiBroken reports, by brute force, whether the edges other than RW have
// a cycle or an RW edge's head reaches its tail through them.
func psiBroken(n int, edges []hyperpolygraph.Edge) bool {
	reach := make([][]bool, n) // reach[a][b]: a path of one or more G edges
	for a := range reach {
		reach[a] = make([]bool, n)
	}
	for _, e := range edges {
		if e.Rel != history.RW {
			reach[e.From][e.To] = true
		}
	}
	for k := range n {
		for a := range n {
			if reach[a][k] {
				for b := range n {
					reach[a][b] = reach[a][b] || reach[k][b]
				}
			}
		}
	}
	for a := range n {
		if reach[a][a] {
			return true
		}
	}
	for _, e := range edges {
		if e.Rel == history.RW && reach[e.To][e.From] {
			return true
		}
	}
	return false
}

// requirePSICycle checks that cyc is a closed cycle of edges among edges
// with at most one RW edge.
func requirePSICycle(t *testing.T, cyc, edges []hyperpolygraph.Edge) {
	t.Helper()
	require.NotEmpty(t, cyc)
	rw := 0
	for i, e := range cyc {
		require.Contains(t, edges, e, "cycle edge %v is not in the graph", e)
		require.Equal(t, e.To, cyc[(i+1)%len(cyc)].From, "cycle %v is not closed", cyc)
		if e.Rel == history.RW {
			rw++
		}
	}
	require.LessOrEqual(t, rw, 1, "cycle %v has %d RW edges", cyc, rw)
}
