package prune_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// fullKnown returns the known graph pruning would hold without reducing
// version orders: each key's known WW edges closed transitively, and an RW
// edge from every known reader of a version to every later writer (plus
// any RW edge known already).
func fullKnown(known []hyperpolygraph.Edge) []hyperpolygraph.Edge {
	type pair struct {
		k    history.KeyID
		a, b history.TxnID
	}
	ww := map[pair]bool{}
	var out []hyperpolygraph.Edge
	for _, e := range known {
		if e.Rel == history.WW {
			ww[pair{e.Key, e.From, e.To}] = true
		} else {
			out = append(out, e)
		}
	}
	for changed := true; changed; {
		changed = false
		for ab := range ww {
			for bc := range ww {
				if ab.k == bc.k && ab.b == bc.a && ab.a != bc.b && !ww[pair{ab.k, ab.a, bc.b}] {
					ww[pair{ab.k, ab.a, bc.b}] = true
					changed = true
				}
			}
		}
	}
	for p := range ww {
		out = append(out, hyperpolygraph.Edge{From: p.a, To: p.b, Rel: history.WW, Key: p.k})
	}
	return withRW(out)
}

// closure returns, for every state s of the (doubled, for SI) known graph,
// the states it reaches by a non-empty path.
func closure(n int, es []hyperpolygraph.Edge, si bool) [][]bool {
	adj := doubled(n, es, si)
	out := make([][]bool, len(adj))
	for s := range adj {
		out[s] = make([]bool, len(adj))
		stack := slices.Clone(adj[s])
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !out[s][u] {
				out[s][u] = true
				stack = append(stack, adj[u]...)
			}
		}
	}
	return out
}

// TestReducedKnownSameReach: after pruning, the reduced known graph
// reaches what the full one (every version order closed, every RW edge it
// derives) reaches: for SER the same nodes; for SI's doubled graph, from
// every state, the same states 1 and the same nodes in either state (a
// full RW edge r→b enters b0, its reduced path b1, which has every
// successor of b0). And pruning with the full order decides the same
// constraints.
func TestReducedKnownSameReach(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			si := level == history.SI
			rng := rand.New(rand.NewPCG(31, uint64(level)))
			opt := oracle.DefaultGenOptions()
			reduced, conflicts := 0, 0
			for i := range n {
				h := genMixed(rng, i, opt)
				g, viol := hyperpolygraph.Build(h, level, nil)
				if viol != nil {
					continue
				}
				full := cloneGraph(g)
				_, _, conf, err := prune.Prune(context.Background(), g, prune.Options{})
				require.NoError(t, err)
				was := prune.SetReduceKnown(false)
				_, _, fullConf, err := prune.Prune(context.Background(), full, prune.Options{})
				prune.SetReduceKnown(was)
				require.NoError(t, err)
				require.Equal(t, fullConf == nil, conf == nil, "one finds a conflict, the other not")
				if conf != nil {
					conflicts++
					continue
				}
				require.ElementsMatch(t, full.WW, g.WW, "the same pairs stay uncertain")
				require.ElementsMatch(t, full.WR, g.WR, "the same reads stay uncertain")
				all := fullKnown(g.Known)
				if len(all) > len(g.Known) {
					reduced++
				}
				got, want := closure(g.N(), g.Known, si), closure(g.N(), all, si)
				// And the full pruning's own known graph, closed.
				other := closure(g.N(), fullKnown(full.Known), si)
				for s := range got {
					for u := range g.N() {
						if !si {
							require.Equal(t, want[s][u], got[s][u], "%d reaches %d", s, u)
							require.Equal(t, want[s][u], other[s][u], "%d reaches %d (full pruning)", s, u)
							continue
						}
						one, any := 2*u+1, func(r [][]bool) bool { return r[s][2*u] || r[s][2*u+1] }
						require.Equal(t, want[s][one], got[s][one], "state %d reaches %d's state 1", s, u)
						require.Equal(t, any(want), any(got), "state %d reaches %d", s, u)
						require.Equal(t, want[s][one], other[s][one], "state %d reaches %d's state 1 (full pruning)", s, u)
					}
				}
				if t.Failed() {
					return
				}
			}
			t.Logf("%d histories, %d with a reduced known graph, %d conflicts", n, reduced, conflicts)
			require.Greater(t, reduced, n/10, "too few histories exercise the reduction")
		})
	}
}

// TestCompactDirtySame: compacting only the keys that gained WW edges
// since the last compaction leaves every pass with the known edges (in
// their order), the constraints, the statistics and the verdict that
// compacting every key gives, on small random histories and on larger
// ones of many passes.
func TestCompactDirtySame(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(47, uint64(level)))
			opt := oracle.DefaultGenOptions()
			multi := 0
			for i := range n + 40 {
				var h *history.History
				if i < n {
					h = genMixed(rng, i, opt)
				} else {
					h = genScale(rng, 300+rng.IntN(300), 3+rng.IntN(8), 10+rng.IntN(40), 4)
				}
				g, all, ok := buildTwice(t, h, level, i%2 == 0)
				if !ok {
					continue
				}
				st, _, conf, err := prune.Prune(context.Background(), g, prune.Options{})
				require.NoError(t, err)
				was := prune.SetCompactDirty(false)
				allSt, _, allConf, err := prune.Prune(context.Background(), all, prune.Options{})
				prune.SetCompactDirty(was)
				require.NoError(t, err)
				require.Equal(t, allConf == nil, conf == nil, "history %d: one finds a conflict, the other not", i)
				require.Equal(t, allSt, st, "history %d", i)
				require.Equal(t, all.Known, g.Known, "history %d: the same known edges", i)
				require.Equal(t, all.WW, g.WW, "history %d", i)
				require.Equal(t, all.WR, g.WR, "history %d", i)
				if st.Passes >= 3 {
					multi++
				}
			}
			t.Logf("%d histories of three passes or more", multi)
			require.Greater(t, multi, n/20, "too few histories compact more than once")
		})
	}
}
