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
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// randomGraph makes a known graph of up to 40 transactions (some excluded)
// with no constraints: T⊥ before the sessions (many short ones, as Jepsen's
// processes, or few long ones), and random WR, WW and RW edges mostly
// along a hidden serial order, sometimes against it.
func randomGraph(rng *rand.Rand, level history.Level) *hyperpolygraph.Graph {
	n := 2 + rng.IntN(39)
	g := &hyperpolygraph.Graph{Level: level, Included: make([]bool, n)}
	g.Included[0] = true
	for t := 1; t < n; t++ {
		g.Included[t] = rng.IntN(8) != 0
	}
	// order is the hidden serial order of 1..n-1; sessions take
	// subsequences of it.
	order := rng.Perm(n - 1)
	nSess := 1 + rng.IntN(n)
	last := make([]history.TxnID, nSess)
	for _, i := range order {
		t := history.TxnID(i + 1)
		if !g.Included[t] {
			continue
		}
		s := rng.IntN(nSess)
		g.Known = append(g.Known, hyperpolygraph.Edge{From: last[s], To: t, Rel: history.SO, Key: -1})
		last[s] = t
	}
	var in []history.TxnID
	for _, i := range order {
		if g.Included[i+1] {
			in = append(in, history.TxnID(i+1))
		}
	}
	if len(in) < 2 {
		return g
	}
	rels := []history.Rel{history.WR, history.WW, history.RW}
	for range rng.IntN(3 * len(in)) {
		i, j := rng.IntN(len(in)), rng.IntN(len(in))
		if i == j {
			continue
		}
		if i > j && rng.IntN(20) != 0 {
			i, j = j, i
		}
		g.Known = append(g.Known, hyperpolygraph.Edge{From: in[i], To: in[j], Rel: rels[rng.IntN(3)], Key: 0})
	}
	return g
}

// buildTwice builds h's graph at level (pairs pending when lazy) and a
// clone of it, for tests that prune the same graph two ways; ok is false
// when building alone finds the history violated.
func buildTwice(t *testing.T, h *history.History, level history.Level, lazy bool) (g, twin *hyperpolygraph.Graph, ok bool) {
	t.Helper()
	g, viol, err := hyperpolygraph.BuildContext(context.Background(), h, level, nil, hyperpolygraph.BuildOptions{LazyPairs: lazy})
	require.NoError(t, err)
	if viol != nil {
		return nil, nil, false
	}
	return g, cloneGraph(g), true
}

func cloneGraph(g *hyperpolygraph.Graph) *hyperpolygraph.Graph {
	c := *g
	c.Included = slices.Clone(g.Included)
	c.Known = slices.Clone(g.Known)
	c.WW = slices.Clone(g.WW)
	c.WR = slices.Clone(g.WR)
	for i := range c.WR {
		c.WR[i].Cands = slices.Clone(c.WR[i].Cands)
	}
	c.Reads = slices.Clone(g.Reads)
	for k := range c.Reads {
		c.Reads[k] = slices.Clone(c.Reads[k])
	}
	return &c
}

// TestChainsReachRandomGraphs: on random known graphs the chain vectors
// answer every state and transaction query as the bitset rows do and as a
// search of the state graph does, and both find the same cycles.
func TestChainsReachRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		si := level == history.SI
		var acyclicN, merged int
		for range n {
			g := randomGraph(rng, level)
			gb, gc := cloneGraph(g), cloneGraph(g)
			stb, rb, cb, err := prune.Prune(context.Background(), gb, prune.Options{Reach: prune.Bitset})
			require.NoError(t, err)
			stc, rc, cc, err := prune.Prune(context.Background(), gc, prune.Options{Reach: prune.Chains})
			require.NoError(t, err)
			require.Equal(t, prune.Bitset, stb.ReachStrategy)
			require.Equal(t, prune.Chains, stc.ReachStrategy)
			require.Equal(t, cb == nil, cc == nil)
			if cc != nil {
				require.NoError(t, validCycle(cc.Cycle, si))
				continue
			}
			acyclicN++
			require.Equal(t, prune.Chains, rc.Strategy())
			sessions := 0
			for _, e := range g.Known {
				if e.Rel == history.SO && e.From == history.InitTxn {
					sessions++
				}
			}
			require.LessOrEqual(t, stc.ReachChains, max(sessions, 1))
			if stc.ReachChains < sessions {
				merged++
			}
			adj := doubled(g.N(), g.Known, si)
			layers := int32(rb.Layers())
			m := int32(stb.States)
			for s := range m {
				for u := range m {
					var want bool
					if si && u&1 == 0 {
						want = s == u || s == u+1 || reachable(adj, int(2*rb.Txn(s/2)+history.TxnID(s&1)), int(2*rb.Txn(u/2))) || reachable(adj, int(2*rb.Txn(s/2)+history.TxnID(s&1)), int(2*rb.Txn(u/2)+1))
					} else {
						from, to := int(rb.Txn(s/layers)), int(rb.Txn(u/layers))
						if si {
							from, to = 2*from+int(s&1), 2*to+1
						}
						want = s == u || reachable(adj, from, to)
					}
					require.Equal(t, want, rb.StateReaches(s, u), "bitset %d ⇝ %d", s, u)
					require.Equal(t, want, rc.StateReaches(s, u), "chains %d ⇝ %d", s, u)
					for _, r := range []*prune.Reach{rb, rc} {
						row, vec := r.Source(s)
						idx, mask, key := r.Target(u)
						got := int(idx) < len(vec) && vec[idx] <= key
						if row != nil {
							got = row[idx]&mask != 0
						}
						require.Equal(t, want, got, "%v: Source(%d), Target(%d)", r.Strategy(), s, u)
					}
				}
			}
			for a := range history.TxnID(g.N()) {
				for b := range history.TxnID(g.N()) {
					require.Equal(t, rb.Reaches(a, b), rc.Reaches(a, b), "Reaches(%d, %d)", a, b)
				}
			}
			// Rank is topological, state 1 before state 0 (which, as a
			// target, stands for either).
			for _, r := range []*prune.Reach{rb, rc} {
				for s := range m {
					for u := range m {
						if s != u && r.StateReaches(s, u) && !(si && u == s-1 && u&1 == 0) {
							require.Less(t, r.Rank(s), r.Rank(u), "%v: %d ⇝ %d", r.Strategy(), s, u)
						}
					}
					if si && s&1 == 0 {
						require.Less(t, r.Rank(s+1), r.Rank(s))
					}
				}
			}
		}
		t.Logf("%v: %d graphs, %d acyclic, %d with sessions merged into fewer chains", level, n, acyclicN, merged)
		require.Positive(t, merged)
	}
}

// manySessions makes a random history of up to 60 transactions over few
// keys and values, in many short sessions (Jepsen's processes) or a few
// long ones, read from a serial, snapshot or arbitrary execution.
func manySessions(rng *rand.Rand) *history.History {
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	nTxn := 2 + rng.IntN(59)
	nSess := 1 + rng.IntN(nTxn)
	nKeys, nVals := 1+rng.IntN(4), 2+rng.IntN(6)
	mode := rng.IntN(3)
	states := [][]int64{make([]int64, nKeys)}
	sess := 0
	for i := range nTxn {
		if rng.IntN(3) == 0 {
			sess = rng.IntN(nSess)
		}
		st := history.Committed
		if rng.IntN(12) == 0 {
			st = history.Aborted
		}
		id := b.Begin(b.Session(int64(sess)), int64(i+1), st, history.Pos{})
		snap := states[len(states)-1]
		if mode == 1 {
			snap = states[max(0, len(states)-1-rng.IntN(3))]
		}
		next := slices.Clone(states[len(states)-1])
		for range 1 + rng.IntN(4) {
			x := int64(rng.IntN(nKeys))
			if rng.IntN(2) == 0 {
				src := snap
				if mode == 2 {
					src = states[rng.IntN(len(states))]
				}
				b.Read(id, x, src[x])
				continue
			}
			v := int64(1 + rng.IntN(nVals))
			next[x] = v
			b.Write(id, x, v)
		}
		if st == history.Committed {
			states = append(states, next)
		}
	}
	return b.Finish()
}

// TestChainsPruneSameAsBitset: pruning decides the same constraints, in
// the same passes, and finds a conflict in the same histories, under both
// strategies; the width-two clauses are the same too.
func TestChainsPruneSameAsBitset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	n := 2000
	if testing.Short() {
		n = 300
	}
	gens := []func() *history.History{
		func() *history.History { return genHistory(rng) },
		func() *history.History { return manySessions(rng) },
		func() *history.History {
			opt := oracle.DefaultGenOptions()
			return oracle.Generate(rng, opt)
		},
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		var pruned, conflicts, clauses int
		for i := range n {
			h := gens[i%len(gens)]()
			g, viol := hyperpolygraph.Build(h, level, nil)
			if viol != nil {
				continue
			}
			gb, gc := cloneGraph(g), cloneGraph(g)
			stb, rb, cb, err := prune.Prune(context.Background(), gb, prune.Options{Reach: prune.Bitset})
			require.NoError(t, err)
			stc, rc, cc, err := prune.Prune(context.Background(), gc, prune.Options{Reach: prune.Chains})
			require.NoError(t, err)
			require.Equal(t, stb.Passes, stc.Passes)
			require.Equal(t, gb.WW, gc.WW)
			require.Equal(t, gb.WR, gc.WR)
			require.Equal(t, gb.Reads, gc.Reads)
			require.ElementsMatch(t, gb.Known, gc.Known)
			require.Equal(t, cb == nil, cc == nil)
			if stb.WWAfter < stb.WWBefore || stb.WRCandsAfter < stb.WRCandsBefore {
				pruned++
			}
			if cc != nil {
				conflicts++
				require.Equal(t, cb.WW, cc.WW)
				require.Equal(t, cb.WR, cc.WR)
				require.Equal(t, len(cb.Options), len(cc.Options))
				for _, cyc := range append([][]hyperpolygraph.Edge{cc.Cycle}, cc.Options...) {
					require.NoError(t, validCycle(cyc, level == history.SI))
				}
				continue
			}
			eb := encode.Encode(gb, rb, encode.Options{TwoWidth: true})
			ec := encode.Encode(gc, rc, encode.Options{TwoWidth: true})
			require.Equal(t, len(eb.Clauses)-eb.TwoWidth, len(ec.Clauses)-ec.TwoWidth)
			require.Equal(t, eb.Clauses[:len(eb.Clauses)-eb.TwoWidth], ec.Clauses[:len(ec.Clauses)-ec.TwoWidth])
			require.Equal(t, sortedClauses(eb.Clauses[len(eb.Clauses)-eb.TwoWidth:]), sortedClauses(ec.Clauses[len(ec.Clauses)-ec.TwoWidth:]), "width-two clauses")
			clauses += ec.TwoWidth
		}
		t.Logf("%v: %d histories, %d pruned something, %d conflicts, %d width-two clauses", level, n, pruned, conflicts, clauses)
		require.Positive(t, pruned)
		require.Positive(t, conflicts)
		require.Positive(t, clauses)
	}
}

// sortedClauses sorts each clause and the list.
func sortedClauses(cs [][]cnf.Lit) [][]cnf.Lit {
	out := make([][]cnf.Lit, len(cs))
	for i, c := range cs {
		out[i] = slices.Sorted(slices.Values(c))
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// TestChainsMergeSessions: a process that takes over after another one
// stopped (it reads what the last one wrote) continues its chain.
func TestChainsMergeSessions(t *testing.T) {
	h := hist(T(1, w(x, 1)), T(1, r(x, 1), w(x, 2)), T(2, r(x, 2), w(y, 1)), T(3, r(y, 1), w(x, 3)), T(3, r(x, 3)))
	for _, level := range []history.Level{history.SER, history.SI} {
		g, viol := hyperpolygraph.Build(h, level, nil)
		require.Nil(t, viol)
		st, r, c, err := prune.Prune(context.Background(), g, prune.Options{Reach: prune.Chains})
		require.NoError(t, err)
		require.Nil(t, c)
		require.Equal(t, 1, st.ReachChains, "three sessions one after another are one chain")
		require.True(t, r.Reaches(1, 5))
		require.False(t, r.Reaches(5, 1))
	}
	// Two sessions side by side stay two chains.
	h = hist(T(1, w(x, 1)), T(2, w(y, 1)), T(1, r(x, 1)), T(2, r(y, 1)))
	g, _ := hyperpolygraph.Build(h, history.SER, nil)
	st, _, c, err := prune.Prune(context.Background(), g, prune.Options{Reach: prune.Chains})
	require.NoError(t, err)
	require.Nil(t, c)
	require.Equal(t, 2, st.ReachChains)
}

// TestAutoStrategy: Auto takes the bitset rows on small histories and the
// chains when the sessions are few beside the transactions, and says so.
func TestAutoStrategy(t *testing.T) {
	h := hist(T(1, w(x, 1)), T(2, w(x, 2)))
	g, _ := hyperpolygraph.Build(h, history.SI, nil)
	st, r, _, err := prune.Prune(context.Background(), g, prune.Options{})
	require.NoError(t, err)
	require.Equal(t, prune.Bitset, st.ReachStrategy)
	require.Equal(t, prune.Bitset, r.Strategy())
	require.Zero(t, st.ReachChains)

	var txns []tx
	for i := range 6000 {
		txns = append(txns, T(int64(1+i%2), w(int64(i), 1)))
	}
	h = hist(txns...)
	for _, level := range []history.Level{history.SER, history.SI} {
		g, _ = hyperpolygraph.Build(h, level, nil)
		st, r, _, err = prune.Prune(context.Background(), g, prune.Options{})
		require.NoError(t, err)
		require.Equal(t, prune.Chains, st.ReachStrategy, "%v", level)
		require.Equal(t, prune.Chains, r.Strategy())
		require.Equal(t, 2, st.ReachChains)
		require.Less(t, st.ReachBytes, int64(st.States*st.States/8))
		require.Equal(t, "chains", st.ReachStrategy.String())
	}
}

// TestChainsBudget: the budget is asked for the chain vectors before they
// are allocated, and its refusal is ErrTooLarge; so is MaxBytes.
func TestChainsBudget(t *testing.T) {
	h := hist(T(1, w(x, 1)), T(2, w(x, 2)), T(1, r(x, 2)))
	refuse := errors.New("no room")
	var asked []string
	fit := func(need int64, what string) error {
		asked = append(asked, what)
		return refuse
	}
	g, _ := hyperpolygraph.Build(h, history.SI, nil)
	st, r, c, err := prune.Prune(context.Background(), g, prune.Options{Reach: prune.Chains, Fit: fit})
	require.ErrorIs(t, err, prune.ErrTooLarge)
	require.ErrorIs(t, err, refuse)
	require.Nil(t, r)
	require.Nil(t, c)
	require.Equal(t, prune.Chains, st.ReachStrategy)
	require.Len(t, asked, 1)
	require.Contains(t, asked[0], "chain vectors (8 states, at most 3 chains)")
	require.Len(t, g.WW, 1, "nothing changed")

	_, _, _, err = prune.Prune(context.Background(), g, prune.Options{Reach: prune.Chains, MaxBytes: 20})
	require.ErrorIs(t, err, prune.ErrTooLarge)
}
