package hyperpolygraph

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// mk builds a history from sessions of transactions given as ops
// "r k v" / "w k v"; the initial transaction writes 0 to every key.
func mk(sessions ...[][]string) *history.History {
	b := history.NewBuilder("test", "test")
	b.SetInit(history.InitImplicit, 0)
	id := int64(0)
	for si, s := range sessions {
		sess := b.Session(int64(si + 1))
		for _, ops := range s {
			id++
			t := b.Begin(sess, id, history.Committed, history.Pos{})
			for _, o := range ops {
				var k, v int64
				var c string
				if _, err := fmt.Sscanf(o, "%s %d %d", &c, &k, &v); err != nil {
					panic(err)
				}
				if c == "r" {
					b.Read(t, k, v)
				} else {
					b.Write(t, k, v)
				}
			}
		}
	}
	b.InitAllKeys(0)
	return b.Finish()
}

func TestBuildDuplicateValues(t *testing.T) {
	// T1 and T2 both write x=1; T3 reads x=1 from one of them.
	h := mk([][]string{{"w 1 1"}}, [][]string{{"w 1 1"}, {"r 1 1"}})
	g, viol := Build(h, history.SER, nil)
	require.Nil(t, viol)
	require.Len(t, g.WR, 1)
	require.Equal(t, []history.TxnID{1, 2}, g.WR[0].Cands)
	require.Len(t, g.WW, 1, "T1, T2 unordered; T⊥ is known to come first")
	known := 0
	for _, e := range g.Known {
		if e.Rel == history.WW {
			require.Equal(t, history.InitTxn, e.From)
			known++
		}
	}
	require.Equal(t, 2, known)
	// One resolution is cyclic: T3 reads T1's version while T2 overwrites
	// it, which gives T3 →rw T2 →so T3.
	for _, fwd := range []bool{true, false} {
		for c := range int32(2) {
			comp := g.Resolve(Assignment{Forward: []bool{fwd}, Choice: []int32{c}})
			cyc := comp.FindCycles(1)
			wantCycle := fwd && c == 0
			require.Equal(t, wantCycle, len(cyc) == 1, "forward=%v choice=%d", fwd, c)
			if !wantCycle {
				order, ok := comp.Order()
				require.True(t, ok)
				require.Len(t, order, 4)
				require.Equal(t, history.InitTxn, order[0])
			}
		}
	}
}

func TestWriteSkewCyclicForSERNotSI(t *testing.T) {
	h := mk([][]string{{"r 1 0", "r 2 0", "w 1 1"}}, [][]string{{"r 1 0", "r 2 0", "w 2 1"}})
	for level, cyclic := range map[history.Level]bool{history.SER: true, history.SI: false} {
		g, viol := Build(h, level, nil)
		require.Nil(t, viol)
		require.Empty(t, g.WW)
		require.Empty(t, g.WR)
		cyc := g.Resolve(Assignment{}).FindCycles(4)
		require.Equal(t, cyclic, len(cyc) > 0, level)
	}
}

func TestLostUpdateCyclicForSI(t *testing.T) {
	h := mk([][]string{{"r 1 0", "w 1 1"}}, [][]string{{"r 1 0", "w 1 2"}})
	g, _ := Build(h, history.SI, nil)
	require.Len(t, g.WW, 1)
	for _, fwd := range []bool{true, false} {
		c := g.Resolve(Assignment{Forward: []bool{fwd}})
		cyc := c.FindCycles(1)
		require.Len(t, cyc, 1)
		// The cycle is closed: each edge ends where the next begins.
		edges := cyc[0]
		for i, e := range edges {
			next := c.Edges[edges[(i+1)%len(edges)]]
			require.Equal(t, c.Edges[e].To, next.From)
		}
	}
}

func TestBuildReportsReadWithNoIncludedWriter(t *testing.T) {
	b := history.NewBuilder("test", "test")
	b.SetInit(history.InitImplicit, 0)
	s := b.Session(1)
	u := b.Begin(s, 1, history.Unknown, history.Pos{})
	b.Write(u, 1, 5)
	r := b.Begin(b.Session(2), 2, history.Committed, history.Pos{})
	b.Read(r, 1, 5)
	b.InitAllKeys(0)
	h := b.Finish()
	_, viol := Build(h, history.SER, nil)
	require.NotNil(t, viol)
	require.Equal(t, history.TxnID(2), viol.Reader)
	g, viol := Build(h, history.SER, func(t history.TxnID) bool { return t == 1 })
	require.Nil(t, viol)
	require.True(t, g.Included[1])
}

func TestBuildContextStops(t *testing.T) {
	// Three writers of x and two readers of T⊥'s version: three pairs;
	// known: SO 5, T⊥'s version order 3, RW derived from the reads up to 6.
	h := mk([][]string{{"w 1 1"}, {"r 1 0"}}, [][]string{{"w 1 2"}, {"r 1 0"}}, [][]string{{"w 1 3"}})
	var need int64
	var what string
	refuse := errors.New("no room")
	_, _, err := BuildContext(context.Background(), h, history.SER, nil, BuildOptions{Fit: func(n int64, w string) error {
		need, what = n, w
		return refuse
	}})
	require.ErrorIs(t, err, refuse)
	require.Equal(t, int64(3*12+(5+2+3+6)*16), need, "pairs of 12 bytes, edges of 16")
	require.Contains(t, what, "3 version-order pairs, up to 16 known edges")

	g, viol, err := BuildContext(context.Background(), h, history.SER, nil, BuildOptions{Fit: func(int64, string) error { return nil }})
	require.NoError(t, err)
	require.Nil(t, viol)
	require.Len(t, g.WW, 3)
	require.LessOrEqual(t, len(g.Known), 16, "the estimate bounds the edges")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = BuildContext(ctx, h, history.SER, nil, BuildOptions{})
	require.ErrorIs(t, err, context.Canceled)
}
