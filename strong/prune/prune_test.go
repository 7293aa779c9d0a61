package prune_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

var _ encode.StateReacher = (*prune.Reach)(nil)

const x, y = 1, 2

func edge(from, to history.TxnID, rel history.Rel, h *history.History, key int64) hyperpolygraph.Edge {
	k := history.KeyID(-1)
	if key >= 0 {
		for i, kk := range h.Keys {
			if kk == key {
				k = history.KeyID(i)
			}
		}
	}
	return hyperpolygraph.Edge{From: from, To: to, Rel: rel, Key: k}
}

func run(t *testing.T, h *history.History, level history.Level) (*hyperpolygraph.Graph, prune.Stats, *prune.Reach, *prune.Conflict) {
	t.Helper()
	g, viol := hyperpolygraph.Build(h, level, nil)
	require.Nil(t, viol)
	st, r, c, err := prune.Prune(context.Background(), g, prune.Options{})
	require.NoError(t, err)
	if c != nil {
		require.NoError(t, validCycle(c.Cycle, level == history.SI))
	}
	return g, st, r, c
}

func TestCaseIWWBySessionOrder(t *testing.T) {
	h := hist(T(1, w(x, 1)), T(1, w(x, 2)))
	for _, level := range []history.Level{history.SER, history.SI} {
		g, st, r, c := run(t, h, level)
		require.Nil(t, c)
		require.Equal(t, 1, st.WWBefore)
		require.Equal(t, 0, st.WWAfter)
		require.Equal(t, 2, st.Passes, "one pass prunes, one confirms the fixpoint")
		require.Empty(t, g.WW)
		require.Contains(t, g.Known, edge(1, 2, history.WW, h, x))
		require.True(t, r.Reaches(1, 2))
		require.False(t, r.Reaches(2, 1))
	}
}

func TestCaseIIIWWByDerivedRW(t *testing.T) {
	// T3 reads T1's x after T2 in its session: T1→WW T2 would derive
	// T3→RW T2 against T2→SO T3.
	h := hist(T(1, w(x, 1)), T(2, w(x, 2)), T(2, r(x, 1)))
	g, st, _, c := run(t, h, history.SER)
	require.Nil(t, c)
	require.Equal(t, 0, st.WWAfter)
	require.Contains(t, g.Known, edge(2, 1, history.WW, h, x))
	require.NotContains(t, g.Known, edge(1, 2, history.WW, h, x))
}

func TestCaseIIReadFromBySessionOrder(t *testing.T) {
	// T2 reads x=1 before T3 writes it in the same session: only T1 is
	// left. T4's read of y keeps two candidates and is renumbered.
	h := hist(T(1, w(x, 1)), T(2, r(x, 1)), T(2, w(x, 1)),
		T(3, r(y, 1)), T(4, w(y, 1)), T(5, w(y, 1)))
	g, st, _, c := run(t, h, history.SER)
	require.Nil(t, c)
	require.Equal(t, 2, st.WRBefore)
	require.Equal(t, 1, st.WRAfter)
	require.Equal(t, 4, st.WRCandsBefore)
	require.Equal(t, 2, st.WRCandsAfter)
	require.Contains(t, g.Known, edge(1, 2, history.WR, h, x))
	require.Len(t, g.WR, 1)
	require.Equal(t, history.TxnID(4), g.WR[0].Reader)
	kx, ky := g.WR[0].Key^1, g.WR[0].Key // keys 1 and 2 are KeyIDs 0 and 1
	require.Equal(t, []hyperpolygraph.Read{{Reader: 2, Writer: 1, Set: -1}}, g.Reads[kx])
	require.Equal(t, []hyperpolygraph.Read{{Reader: 4, Writer: -1, Set: 0}}, g.Reads[ky])
}

func TestCaseIIReadFromByDerivedRW(t *testing.T) {
	// Session 2: T2 w(x,1), T3 w(x,2), T4 r(x,1). Case I orders T2 before
	// T3; reading from T2 would then derive T4→RW T3 against T3→SO T4.
	h := hist(T(1, w(x, 1)), T(2, w(x, 1)), T(2, w(x, 2)), T(2, r(x, 1)))
	g, st, _, c := run(t, h, history.SER)
	require.Nil(t, c)
	require.Equal(t, 0, st.WRAfter)
	require.Contains(t, g.Known, edge(1, 4, history.WR, h, x))
	// And T1's version then comes after T3's (T4 read it after T3).
	require.Contains(t, g.Known, edge(3, 1, history.WW, h, x))
}

func TestConflictNoCandidate(t *testing.T) {
	// T1 reads x=1 before both of its writers in its session.
	h := hist(T(1, r(x, 1)), T(1, w(x, 1)), T(1, w(x, 1)))
	for _, level := range []history.Level{history.SER, history.SI} {
		_, _, r, c := run(t, h, level)
		require.Nil(t, r)
		require.NotNil(t, c)
		require.NotNil(t, c.WR)
		require.Nil(t, c.WW)
		require.Equal(t, []history.TxnID{2, 3}, c.WR.Cands)
		require.Len(t, c.Options, 2)
		for i, cyc := range c.Options {
			require.NoError(t, validCycle(cyc, level == history.SI))
			require.Equal(t, edge(c.WR.Cands[i], 1, history.WR, h, x), cyc[0])
		}
	}
}

func TestConflictWWBothWays(t *testing.T) {
	// Each writer's version is read after the other writer in a session:
	// either order derives an RW edge against session order.
	h := hist(T(1, w(x, 1)), T(1, r(x, 2)), T(2, w(x, 2)), T(2, r(x, 1)))
	for _, level := range []history.Level{history.SER, history.SI} {
		_, _, _, c := run(t, h, level)
		require.NotNil(t, c, level)
		require.NotNil(t, c.WW)
		require.Len(t, c.Options, 2)
		for _, cyc := range c.Options {
			require.NoError(t, validCycle(cyc, level == history.SI))
			// The WW edge is fine on its own; the RW edge it derives is not.
			require.Equal(t, history.RW, cyc[0].Rel)
		}
	}
}

func TestConflictKnownCycle(t *testing.T) {
	h := hist(T(1, w(x, 1), r(y, 1)), T(2, r(x, 1), w(y, 1)))
	_, _, r, c := run(t, h, history.SER)
	require.Nil(t, r)
	require.NotNil(t, c)
	require.Nil(t, c.Options)
	require.Len(t, c.Cycle, 2)
	for _, e := range c.Cycle {
		require.Equal(t, history.WR, e.Rel)
	}
}

func TestWriteSkewSERButNotSI(t *testing.T) {
	// Each reads both keys initially and writes one: the RW edges T1→T2
	// (y) and T2→T1 (x) form a cycle SER forbids and SI allows (no RW
	// edge follows a non-RW edge).
	h := hist(T(1, r(x, 0), r(y, 0), w(x, 1)), T(2, r(x, 0), r(y, 0), w(y, 1)))
	_, _, _, c := run(t, h, history.SER)
	require.NotNil(t, c)
	for _, e := range c.Cycle {
		require.Equal(t, history.RW, e.Rel)
	}
	_, _, r, c := run(t, h, history.SI)
	require.Nil(t, c)
	require.False(t, r.Reaches(1, 2), "an RW edge alone is no path of the induced graph")
	require.False(t, r.Reaches(2, 1))
	require.True(t, r.Reaches(0, 1))
}

func TestWriteSkewWithDuplicates(t *testing.T) {
	// As above, but T3 also writes x=0 and y=0, so each read of 0 may come
	// from T⊥ or T3. SER needs both T1 and T2 to read from T3 (otherwise the
	// RW edges of the write skew are back), and T3 must then come before
	// both: satisfiable. The pruning must keep every such choice.
	h := hist(T(1, r(x, 0), r(y, 0), w(x, 1)), T(2, r(x, 0), r(y, 0), w(y, 1)), T(3, w(x, 0), w(y, 0)))
	for _, level := range []history.Level{history.SER, history.SI} {
		var c tally
		checkSound(t, h, level, &c)
		require.Equal(t, 1, c.checked)
		require.Equal(t, 1, c.acyclicBefore)
		require.Equal(t, 0, c.conflicts)
	}
}

func TestLostUpdateIsSIConflict(t *testing.T) {
	// Both read x=0 and write x: either version order closes a cycle with
	// the other's RW edge, which follows the WW edge.
	h := hist(T(1, r(x, 0), w(x, 1)), T(2, r(x, 0), w(x, 2)))
	_, _, _, c := run(t, h, history.SI)
	require.NotNil(t, c)
	require.NotNil(t, c.WW)
	_, _, _, c = run(t, h, history.SER)
	require.NotNil(t, c)
}

func TestLimits(t *testing.T) {
	h := hist(T(1, w(x, 1)), T(2, w(x, 2)))
	g, _ := hyperpolygraph.Build(h, history.SI, nil)
	st, r, c, err := prune.Prune(context.Background(), g, prune.Options{MaxBytes: 16})
	require.ErrorIs(t, err, prune.ErrTooLarge)
	require.Nil(t, r)
	require.Nil(t, c)
	require.Equal(t, 6, st.States)
	require.Equal(t, int64(6*8), st.ReachBytes)
	require.Len(t, g.WW, 1, "nothing changed")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err = prune.Prune(ctx, g, prune.Options{})
	require.ErrorIs(t, err, context.Canceled)

	// The memory budget is asked for the matrix before it is allocated,
	// and its refusal comes back as is, with ErrTooLarge.
	refuse := errors.New("no room")
	var asked []int64
	fit := func(need int64, what string) error {
		asked = append(asked, need)
		require.Contains(t, what, "reachability matrix (6 states)")
		return refuse
	}
	_, r, _, err = prune.Prune(context.Background(), g, prune.Options{Fit: fit})
	require.ErrorIs(t, err, prune.ErrTooLarge)
	require.ErrorIs(t, err, refuse)
	require.Nil(t, r)
	require.Equal(t, []int64{6 * 8}, asked)
	require.Len(t, g.WW, 1, "nothing changed")
}

func TestExcludedTransactions(t *testing.T) {
	// An aborted and an unknown transaction take no part.
	h := hist(T(1, w(x, 1)), tx{Session: 2, Ops: []op{w(x, 2)}, Status: history.Aborted}, tx{Session: 3, Ops: []op{w(x, 3)}, Status: history.Unknown}, T(1, r(x, 1)))
	g, st, r, c := run(t, h, history.SI)
	require.Nil(t, c)
	require.Equal(t, 3, st.Nodes)
	require.Equal(t, 6, st.States)
	require.Empty(t, g.WW)
	require.False(t, r.Reaches(2, 3))
	require.True(t, r.Reaches(2, 2))
	require.Equal(t, int32(-1), r.Node(2))
	require.True(t, r.Reaches(0, 4))
}
