package hyperpolygraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// mkHinted is mk with version hints "k a<b" and per-transaction statuses
// ("c", "a", "u") given in the same order as the transactions.
func mkHinted(hints []string, statuses string, sessions ...[][]string) *history.History {
	h := mk(sessions...)
	for _, s := range hints {
		var k, a, b int64
		if _, err := fmt.Sscanf(s, "%d %d<%d", &k, &a, &b); err != nil {
			panic(err)
		}
		key := keyOf(h, k)
		h.VersionHints = append(h.VersionHints, history.VersionHint{Key: key, Before: valueOf(h, key, a), After: valueOf(h, key, b)})
	}
	for i, c := range statuses {
		h.Txns[i+1].Status = map[rune]history.Status{'c': history.Committed, 'a': history.Aborted, 'u': history.Unknown}[c]
	}
	return h
}

func keyOf(h *history.History, k int64) history.KeyID {
	for i, x := range h.Keys {
		if x == k {
			return history.KeyID(i)
		}
	}
	panic("no key")
}

func valueOf(h *history.History, k history.KeyID, v int64) history.ValueID {
	for i, x := range h.Values[k] {
		if x == v {
			return history.ValueID(i)
		}
	}
	panic("no value")
}

func edgeSet(es []Edge) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%d-%s(%d)->%d", e.From, e.Rel, e.Key, e.To))
	}
	sort.Strings(out)
	return out
}

func TestApplyVersionHints(t *testing.T) {
	// T1 writes 1, T2 writes 2 then 3 (2 is intermediate), T3 writes 4,
	// T4 reads 1 and T5 reads 3; the hints say 1 < 2 < 3 < 4.
	h := mkHinted([]string{"1 1<2", "1 2<3", "1 3<4", "1 1<2"}, "",
		[][]string{{"w 1 1"}, {"w 1 2", "w 1 3"}, {"w 1 4"}},
		[][]string{{"r 1 1"}, {"r 1 3"}})
	g, viol := Build(h, history.SER, nil)
	require.Nil(t, viol)
	require.Len(t, g.WW, 3) // pairs of T1, T2, T3
	before := len(g.Known)
	require.Nil(t, g.ApplyVersionHints(h.HintsAt(history.SER)))
	// T1 < T2 and T2 < T3 become known, deduplicated; T1 < T3 stays a pair
	// (pruning orients it); T4 read T1's version, overwritten by T2; T5 read
	// T2's, overwritten by T3.
	require.Equal(t, []string{"1-ww(0)->2", "2-ww(0)->3", "4-rw(0)->2", "5-rw(0)->3"}, edgeSet(g.Known[before:]))
	require.Equal(t, []WWPair{{Key: 0, A: 1, B: 3}}, g.WW)
	// Applying again changes nothing.
	require.Nil(t, g.ApplyVersionHints(h.HintsAt(history.SER)))
	require.Len(t, g.Known, before+4)
	require.Len(t, g.WW, 1)
}

func TestApplyVersionHintsSkipsUncertainVersions(t *testing.T) {
	// Value 2 is written by T2 and T3: hints about it stay out. T4 is
	// aborted and T5 unknown (excluded): not writers either.
	h := mkHinted([]string{"1 1<2", "1 2<6", "1 1<6", "1 1<7"}, "cccau",
		[][]string{{"w 1 1"}, {"w 1 2"}, {"w 1 2"}, {"w 1 6"}, {"w 1 7"}})
	g, _ := Build(h, history.SER, nil)
	n, ww := len(g.Known), len(g.WW)
	require.Nil(t, g.ApplyVersionHints(h.HintsAt(history.SER)))
	require.Equal(t, n, len(g.Known))
	require.Equal(t, ww, len(g.WW))
	// With T5 included, 1 < 7 orders T1 before T5.
	g, _ = Build(h, history.SER, func(tx history.TxnID) bool { return tx == 5 })
	n = len(g.Known)
	require.Nil(t, g.ApplyVersionHints(h.HintsAt(history.SER)))
	require.Equal(t, []string{"1-ww(0)->5"}, edgeSet(g.Known[n:]))
}

func TestApplyVersionHintsConflict(t *testing.T) {
	// [1 2] and [2 1]: a cycle of hints.
	h := mkHinted([]string{"1 1<2", "1 2<1"}, "", [][]string{{"w 1 1"}, {"w 1 2"}})
	g, _ := Build(h, history.SER, nil)
	c := g.ApplyVersionHints(h.HintsAt(history.SER))
	require.Equal(t, []string{"1-ww(0)->2", "2-ww(0)->1"}, edgeSet(c))
	require.Empty(t, g.WW)
	// A hint against T⊥'s version, which comes first.
	h = mkHinted([]string{"1 1<0"}, "", [][]string{{"w 1 1"}})
	g, _ = Build(h, history.SER, nil)
	require.Equal(t, []string{"0-ww(0)->1", "1-ww(0)->0"}, edgeSet(g.ApplyVersionHints(h.HintsAt(history.SER))))
	// A hint that agrees with T⊥ adds nothing.
	h = mkHinted([]string{"1 0<1"}, "", [][]string{{"w 1 1"}})
	g, _ = Build(h, history.SER, nil)
	n := len(g.Known)
	require.Nil(t, g.ApplyVersionHints(h.HintsAt(history.SER)))
	require.Len(t, g.Known, n)
	// A cycle through two keys is a cycle all the same (G0).
	h = mkHinted([]string{"1 1<2", "2 2<1"}, "", [][]string{{"w 1 1", "w 2 1"}, {"w 1 2", "w 2 2"}})
	g, _ = Build(h, history.SER, nil)
	require.Equal(t, []string{"1-ww(0)->2", "2-ww(1)->1"}, edgeSet(g.ApplyVersionHints(h.HintsAt(history.SER))))
}

// mkTimed builds n transactions in the given sessions with the given
// intervals; an interval end of -1 stands for "never completes".
func mkTimed(sess []int64, iv [][2]int64, included []bool) *Graph {
	b := history.NewBuilder("test", "test")
	for i := range iv {
		tx := b.Begin(b.Session(sess[i]), int64(i+1), history.Committed, history.Pos{})
		end := iv[i][1]
		if end < 0 {
			end = math.MaxInt64
		}
		b.SetInterval(tx, iv[i][0], end)
	}
	h := b.Finish()
	g := &Graph{H: h, Included: make([]bool, len(h.Txns))}
	for i := range g.Included {
		g.Included[i] = i == 0 || included == nil || included[i-1]
	}
	return g
}

func TestAddRealTime(t *testing.T) {
	// T1 [0,1], T2 [2,5], T3 [3,4], T4 [6,7]: T1 → T2, T1 → T3, T2 → T4,
	// T3 → T4; T1 → T4 is implied.
	g := mkTimed([]int64{1, 2, 3, 1}, [][2]int64{{0, 1}, {2, 5}, {3, 4}, {6, 7}}, nil)
	rt := g.AddRealTime()
	require.Equal(t, []string{"1-rt(-1)->2", "1-rt(-1)->3", "2-rt(-1)->4", "3-rt(-1)->4"}, edgeSet(rt))
	require.Equal(t, rt, g.Known)
	// Touching intervals are concurrent; an open one precedes nothing; an
	// excluded one takes no part.
	g = mkTimed([]int64{1, 2, 3, 4}, [][2]int64{{0, 2}, {2, 3}, {1, -1}, {5, 6}}, []bool{true, true, true, false})
	require.Nil(t, g.AddRealTime())
	g = mkTimed([]int64{1, 2, 3}, [][2]int64{{0, 2}, {1, -1}, {5, 6}}, nil)
	require.Equal(t, []string{"1-rt(-1)->3"}, edgeSet(g.AddRealTime()))
}

// AddRealTime returns exactly the transitive reduction of the interval
// order, on random histories with a few processes.
func TestAddRealTimeIsTheTransitiveReduction(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		procs := 1 + rng.IntN(5)
		n := 1 + rng.IntN(40)
		var sess []int64
		var iv [][2]int64
		clock := make([]int64, procs)
		for range n {
			p := rng.IntN(procs)
			s := clock[p] + int64(rng.IntN(5))
			e := s + int64(rng.IntN(8))
			if rng.IntN(10) == 0 {
				e = -1
			}
			clock[p] = e + 1
			if e < 0 {
				clock[p] = s + 1000 // the process's successor starts later
			}
			sess = append(sess, int64(p))
			iv = append(iv, [2]int64{s, e})
		}
		g := mkTimed(sess, iv, nil)
		rt := g.AddRealTime()
		end := func(i int) int64 {
			if iv[i][1] < 0 {
				return math.MaxInt64
			}
			return iv[i][1]
		}
		before := func(a, b int) bool { return end(a) < iv[b][0] }
		// Closure of the edges = the order.
		reach := make([][]bool, n+1)
		for i := range reach {
			reach[i] = make([]bool, n+1)
		}
		for _, e := range rt {
			reach[e.From][e.To] = true
		}
		for k := 1; k <= n; k++ {
			for i := 1; i <= n; i++ {
				for j := 1; j <= n; j++ {
					if reach[i][k] && reach[k][j] {
						reach[i][j] = true
					}
				}
			}
		}
		for a := range n {
			for b := range n {
				require.Equal(t, before(a, b), reach[a+1][b+1], "iter %d: %d→%d %v", iter, a+1, b+1, iv)
			}
		}
		// No edge is implied by the others.
		for _, e := range rt {
			a, b := int(e.From)-1, int(e.To)-1
			for c := range n {
				require.False(t, before(a, c) && before(c, b), "iter %d: %v implied through %d", iter, e, c+1)
			}
		}
		require.LessOrEqual(t, len(rt), n*procs)
	}
}
