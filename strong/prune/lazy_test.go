package prune_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// buildBoth builds h's hyper-polygraph with its pairs listed and pending.
func buildBoth(t *testing.T, h *history.History, level history.Level, include func(history.TxnID) bool) (eager, lazy *hyperpolygraph.Graph) {
	ctx := context.Background()
	eager, viol, err := hyperpolygraph.BuildContext(ctx, h, level, include, hyperpolygraph.BuildOptions{})
	require.NoError(t, err)
	if viol != nil {
		return nil, nil
	}
	lazy, _, err = hyperpolygraph.BuildContext(ctx, h, level, include, hyperpolygraph.BuildOptions{LazyPairs: true})
	require.NoError(t, err)
	require.True(t, lazy.Pending)
	require.Empty(t, lazy.WW)
	return eager, lazy
}

// TestLazyPairsSame: pruning a graph whose pairs are pending (listed key
// by key as pruning decides them) leaves exactly what pruning the listed
// pairs leaves: the same uncertain pairs in the same order, the same
// read-from sets and reads, the same known edges (so the same known
// reachability) and the same conflict. After a conflict, the pairs left
// pending list to those the eager pruning kept.
func TestLazyPairsSame(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(47, uint64(level)))
			opt := oracle.DefaultGenOptions()
			pairs, conflicts := 0, 0
			for i := range n {
				h := genMixed(rng, i, opt)
				// Some unknown-status transactions taken, as Decide may.
				salt := rng.Uint64()
				include := func(t history.TxnID) bool { return (uint64(t)*0x9e3779b97f4a7c15^salt)&1 == 0 }
				eager, lazy := buildBoth(t, h, level, include)
				if eager == nil {
					continue
				}
				require.Equal(t, len(eager.WW), lazy.NumPairs(), "pairs counted")
				require.Equal(t, eager.Known, lazy.Known, "Build's known edges")
				pairs += len(eager.WW)
				hinted := false
				if i%2 == 0 {
					// Version hints join the known graph: eager drops their
					// pairs, lazy leaves pruning to.
					hints := randomHints(rng, h)
					hinted = len(hints) > 0
					require.Equal(t, eager.ApplyVersionHints(hints), lazy.ApplyVersionHints(hints), "hint cycle")
					require.Equal(t, eager.Known, lazy.Known, "hinted known edges")
				}
				est, er, econf, err := prune.Prune(context.Background(), eager, prune.Options{})
				require.NoError(t, err)
				lst, lr, lconf, err := prune.Prune(context.Background(), lazy, prune.Options{})
				require.NoError(t, err)
				require.Equal(t, econf, lconf, "conflict")
				require.Equal(t, er == nil, lr == nil)
				if hinted {
					lst.WWBefore = est.WWBefore // lazy counts the hinted pairs
					if lconf != nil && lconf.Options == nil {
						// The hints closed a cycle: no pass ran, and the
						// pending pairs still count the hinted ones.
						lst.WWAfter = est.WWAfter
						lazy.Pending, lazy.PendingFrom = false, 0
						lazy.WW = eager.WW
					}
				}
				if lconf != nil {
					conflicts++
					lazy.ListPairs()
					if hinted {
						// The keys not reached list their hinted pairs too.
						lazy.WW = withoutDirect(lazy.WW, lazy.Known)
						lst.WWAfter = len(lazy.WW)
					}
				}
				require.Equal(t, est, lst, "stats")
				require.False(t, lazy.Pending)
				require.Equal(t, eager.WW, lazy.WW, "uncertain pairs")
				require.Equal(t, eager.WR, lazy.WR, "read-from sets")
				require.Equal(t, eager.Reads, lazy.Reads, "reads")
				require.Equal(t, eager.Known, lazy.Known, "known edges")
				if lr != nil {
					for a := range eager.N() {
						for b := range eager.N() {
							if eager.Included[a] && eager.Included[b] {
								require.Equal(t, er.Reaches(history.TxnID(a), history.TxnID(b)), lr.Reaches(history.TxnID(a), history.TxnID(b)), "%d reaches %d", a, b)
							}
						}
					}
				}
			}
			t.Logf("%d histories, %d pairs before pruning, %d conflicts", n, pairs, conflicts)
			require.Greater(t, conflicts, n/20, "too few conflicts exercise the stop")
		})
	}
}

// withoutDirect drops the pairs a known WW edge joins.
func withoutDirect(ww []hyperpolygraph.WWPair, known []hyperpolygraph.Edge) []hyperpolygraph.WWPair {
	direct := map[hyperpolygraph.WWPair]bool{}
	for _, e := range known {
		if e.Rel == history.WW {
			direct[hyperpolygraph.WWPair{Key: e.Key, A: min(e.From, e.To), B: max(e.From, e.To)}] = true
		}
	}
	return slices.DeleteFunc(ww, func(p hyperpolygraph.WWPair) bool { return direct[p] })
}

// randomHints returns a few version hints between values written to one
// key (what a list history's reads would state, true or not).
func randomHints(rng *rand.Rand, h *history.History) []history.VersionHint {
	byKey := map[history.KeyID][]history.ValueID{}
	for _, txn := range h.Txns[1:] {
		for _, op := range txn.Ops {
			if op.Kind.IsWrite() {
				byKey[op.Key] = append(byKey[op.Key], op.Value)
			}
		}
	}
	var out []history.VersionHint
	for k, vs := range byKey {
		for range rng.IntN(len(vs) + 1) {
			out = append(out, history.VersionHint{Key: k, Before: vs[rng.IntN(len(vs))], After: vs[rng.IntN(len(vs))]})
		}
	}
	slices.SortFunc(out, func(a, b history.VersionHint) int { return int(a.Key) - int(b.Key) })
	return out
}

// TestLazyPairsStopKeepsRest: when the budget stops pruning part way, the
// keys not reached stay pending and no pair is lost: every pair of
// writers is known ordered or listed once ListPairs has run.
func TestLazyPairsStopKeepsRest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	stopped := 0
	for range 500 {
		h := genSized(rng, 14, 40)
		_, g := buildBoth(t, h, history.SER, nil)
		if g == nil {
			continue
		}
		before := g.NumPairs()
		calls, limit := 0, 1+rng.IntN(6)
		refuse := errors.New("refused")
		_, _, _, err := prune.Prune(context.Background(), g, prune.Options{Fit: func(int64, string) error {
			if calls++; calls > limit {
				return refuse
			}
			return nil
		}})
		if err == nil {
			continue
		}
		require.ErrorIs(t, err, refuse)
		stopped++
		// Pruning again, unbounded, reaches the fixpoint of the eager
		// graph (the fixpoint is unique: deciding only adds known edges).
		again := cloneGraph(g)
		_, _, aconf, err := prune.Prune(context.Background(), again, prune.Options{})
		require.NoError(t, err)
		require.True(t, aconf != nil || !again.Pending)
		eager, _ := hyperpolygraph.Build(h, history.SER, nil)
		_, _, econf, err := prune.Prune(context.Background(), eager, prune.Options{})
		require.NoError(t, err)
		require.Equal(t, econf == nil, aconf == nil, "conflict")
		if econf == nil {
			require.ElementsMatch(t, eager.WW, again.WW, "uncertain pairs")
			require.ElementsMatch(t, eager.WR, again.WR, "read-from sets")
		}
		g.ListPairs()
		type pair struct {
			k    history.KeyID
			a, b history.TxnID
		}
		covered := map[pair]bool{}
		for _, p := range g.WW {
			covered[pair{p.Key, p.A, p.B}] = true
		}
		// A decided pair may be ordered by a path of known WW edges.
		succ := map[pair]bool{}
		for _, e := range g.Known {
			if e.Rel == history.WW {
				succ[pair{e.Key, e.From, e.To}] = true
			}
		}
		for changed := true; changed; {
			changed = false
			for ab := range succ {
				for bc := range succ {
					if ab.k == bc.k && ab.b == bc.a && !succ[pair{ab.k, ab.a, bc.b}] {
						succ[pair{ab.k, ab.a, bc.b}] = true
						changed = true
					}
				}
			}
		}
		for k, ws := range g.Writers {
			for i, a := range ws {
				for _, b := range ws[i+1:] {
					p := pair{history.KeyID(k), a, b}
					require.True(t, covered[p] || succ[p] || succ[pair{p.k, b, a}], "pair %d %d of key %d lost", a, b, k)
				}
			}
		}
		require.LessOrEqual(t, len(g.WW), before)
	}
	require.Greater(t, stopped, 50, "too few stops")
}
