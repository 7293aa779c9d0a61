package encode_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/dbcop"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/histtest"
	"github.com/hyperiso/hyperiso/internal/shared"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// Compact hand-made histories (see package histtest).
var (
	r    = histtest.R
	w    = histtest.W
	T    = histtest.T
	hist = histtest.Build
)

func pruned(t *testing.T, h *history.History, level history.Level) (*hyperpolygraph.Graph, *prune.Reach) {
	t.Helper()
	g, viol := hyperpolygraph.Build(h, level, nil)
	require.Nil(t, viol)
	_, reach, c, err := prune.Prune(context.Background(), g, prune.Options{})
	require.NoError(t, err)
	require.Nil(t, c)
	return g, reach
}

// twoWidth returns the width-two clauses of an encoding, each sorted, in
// sorted order.
func twoWidth(e *encode.Encoding) [][]cnf.Lit {
	base := len(e.Clauses) - e.TwoWidth
	out := slices.Clone(e.Clauses[base:])
	for _, c := range out {
		slices.Sort(c)
	}
	slices.SortFunc(out, func(a, b []cnf.Lit) int { return slices.Compare(a, b) })
	return out
}

// wwLit returns the literal that orders a before b on key.
func wwLit(t *testing.T, e *encode.Encoding, a, b history.TxnID) cnf.Lit {
	for i, p := range e.G.WW {
		switch {
		case p.A == a && p.B == b:
			return cnf.Lit(e.WWVar[i])
		case p.A == b && p.B == a:
			return -cnf.Lit(e.WWVar[i])
		}
	}
	t.Fatalf("no WW pair %d, %d", a, b)
	return 0
}

func wrLit(t *testing.T, e *encode.Encoding, from, reader history.TxnID) cnf.Lit {
	for i, s := range e.G.WR {
		if s.Reader == reader {
			if j := slices.Index(s.Cands, from); j >= 0 {
				return cnf.Lit(e.WRBase[i] + int32(j))
			}
		}
	}
	t.Fatalf("no WR candidate %d → %d", from, reader)
	return 0
}

func TestCanonicalClause(t *testing.T) {
	// Session 2 runs T1 w(y,2) then T2 w(x,1); session 1 runs T3 w(x,2)
	// then T4 w(y,1). T2→WW T3 (x) ⇝SO T4 →WW T1 (y) ⇝SO T2 is a cycle of
	// width two; no other pair of orders closes one.
	h := hist(T(2, w(2, 2)), T(2, w(1, 1)), T(1, w(1, 2)), T(1, w(2, 1)))
	for _, level := range []history.Level{history.SER, history.SI} {
		g, reach := pruned(t, h, level)
		e := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		require.Equal(t, [][]cnf.Lit{sorted(-wwLit(t, e, 2, 3), -wwLit(t, e, 4, 1))}, twoWidth(e), level)
	}
}

func sorted(ls ...cnf.Lit) []cnf.Lit {
	slices.Sort(ls)
	return ls
}

func TestDerivedRWClause(t *testing.T) {
	// T4 reads x=1 from T1 or T2 after T3 wrote x in its session. Reading
	// from T1 while T1's version precedes T3's derives T4→RW T3 against
	// T3→SO T4; the same for T2.
	h := hist(T(1, w(1, 1)), T(2, w(1, 1)), T(3, w(1, 2)), T(3, r(1, 1)))
	for _, level := range []history.Level{history.SER, history.SI} {
		g, reach := pruned(t, h, level)
		e := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		got := twoWidth(e)
		require.Contains(t, got, sorted(-wwLit(t, e, 1, 3), -wrLit(t, e, 1, 4)), level)
		require.Contains(t, got, sorted(-wwLit(t, e, 2, 3), -wrLit(t, e, 2, 4)), level)
	}
}

func TestSIClauseNeedsNonRWBeforeRW(t *testing.T) {
	// Write skew over uncertain reads: T1 and T2 each read x and y = 0,
	// from T⊥ or T3 (which writes both to 0 again), and write one key. T1
	// reading y from T⊥ derives T1→RW T2, T2 reading x from T⊥ derives
	// T2→RW T1: a cycle for SER, but two RW edges in a row for SI.
	h := hist(T(1, r(1, 0), r(2, 0), w(1, 1)), T(2, r(1, 0), r(2, 0), w(2, 1)), T(3, w(1, 0), w(2, 0)))
	for _, level := range []history.Level{history.SER, history.SI} {
		g, reach := pruned(t, h, level)
		e := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		var ry1, rx2 cnf.Lit
		for i, s := range g.WR {
			j := slices.Index(s.Cands, history.InitTxn)
			if s.Reader == 1 && h.Keys[s.Key] == 2 {
				ry1 = cnf.Lit(e.WRBase[i] + int32(j))
			}
			if s.Reader == 2 && h.Keys[s.Key] == 1 {
				rx2 = cnf.Lit(e.WRBase[i] + int32(j))
			}
		}
		require.NotZero(t, ry1)
		require.NotZero(t, rx2)
		if level == history.SER {
			require.Contains(t, twoWidth(e), sorted(-ry1, -rx2))
		} else {
			require.NotContains(t, twoWidth(e), sorted(-ry1, -rx2))
		}
	}
}

// plain hides the states of a Reach.
type plain struct{ r *prune.Reach }

func (p plain) Reaches(a, b history.TxnID) bool { return p.r.Reaches(a, b) }

// genHistory makes a random history of up to n transactions with few
// values, so that many reads have several candidate writers.
func genHistory(rng *rand.Rand, n int) *history.History {
	b := history.NewBuilder("gen", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	nSess, nKeys, nVals := 2+rng.IntN(4), 1+rng.IntN(4), 1+rng.IntN(3)
	store := make([]int64, nKeys)
	for i := range 2 + rng.IntN(n) {
		id := b.Begin(b.Session(int64(rng.IntN(nSess))), int64(i+1), history.Committed, history.Pos{})
		snap := slices.Clone(store)
		for range 1 + rng.IntN(4) {
			x := rng.IntN(nKeys)
			if rng.IntN(2) == 0 {
				v := snap[x]
				if rng.IntN(8) == 0 {
					v = int64(rng.IntN(nVals + 1))
				}
				snap[x] = v
				b.Read(id, int64(x), v)
				continue
			}
			v := int64(rng.IntN(nVals + 1))
			snap[x], store[x] = v, v
			b.Write(id, int64(x), v)
		}
	}
	return b.Finish()
}

// TestFastMatchesNaive compares the rank-window enumeration with testing
// every pair of literal edges, and SER's plain-Reacher fallback with both.
func TestFastMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, total := 1500, 0
	if testing.Short() {
		n = 200
	}
	for i := range n {
		h := genHistory(rng, 4+i%40)
		for _, level := range []history.Level{history.SER, history.SI} {
			g, viol := hyperpolygraph.Build(h, level, nil)
			if viol != nil {
				continue
			}
			_, reach, c, err := prune.Prune(context.Background(), g, prune.Options{})
			require.NoError(t, err)
			if c != nil {
				continue
			}
			fast := encode.Encode(g, reach, encode.Options{TwoWidth: true})
			naive := encode.Encode(g, nil, encode.Options{})
			naive.AddTwoWidthNaive(reach)
			require.Equal(t, twoWidth(naive), twoWidth(fast))
			total += fast.TwoWidth
			fallback := encode.Encode(g, plain{reach}, encode.Options{TwoWidth: true})
			if level == history.SER {
				require.Equal(t, twoWidth(fast), twoWidth(fallback))
			} else {
				require.Zero(t, fallback.TwoWidth)
			}
		}
	}
	t.Logf("%d width-two clauses agree", total)
	require.Positive(t, total)
}

func TestFastMatchesNaiveBench(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	h, err := dbcop.Read(shared.Path(t, "bench", "BL-1k", "hist-00000"), dbcop.Options{DropAborted: true})
	require.NoError(t, err)
	for _, level := range []history.Level{history.SER, history.SI} {
		g, reach := pruned(t, h, level)
		fast := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		naive := encode.Encode(g, nil, encode.Options{})
		naive.AddTwoWidthNaive(reach)
		require.Equal(t, twoWidth(naive), twoWidth(fast))
		t.Logf("%v: %d width-two clauses", level, fast.TwoWidth)
	}
}

func TestTwoWidthBudget(t *testing.T) {
	h, err := dbcop.Read(shared.Path(t, "bench", "BL-1k", "hist-00000"), dbcop.Options{DropAborted: true})
	require.NoError(t, err)
	g, reach := pruned(t, h, history.SER)
	full := encode.Encode(g, reach, encode.Options{TwoWidth: true})
	require.False(t, full.TwoWidthTruncated)
	all := twoWidth(full)
	for _, b := range []struct {
		work    int64
		clauses int
	}{{1000, 1 << 30}, {1 << 40, 10}} {
		restore := encode.SetTwoWidthBudget(b.work, b.clauses)
		part := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		restore()
		require.True(t, part.TwoWidthTruncated)
		require.Less(t, part.TwoWidth, full.TwoWidth)
		for _, c := range twoWidth(part) {
			require.Contains(t, all, c)
		}
	}
	// The proportional budgets: a clause a variable, or ten tests an edge.
	for _, b := range []struct{ work, clauses int64 }{{1 << 40, 1}, {10, 1 << 40}} {
		restore := encode.SetTwoWidthPerVar(b.work, b.clauses, 0)
		part := encode.Encode(g, reach, encode.Options{TwoWidth: true})
		restore()
		require.True(t, part.TwoWidthTruncated)
		require.Less(t, part.TwoWidth, full.TwoWidth)
		require.Positive(t, part.TwoWidth)
		if b.clauses == 1 {
			// The cap is checked after each edge's scan: a little over.
			require.Less(t, part.TwoWidth, 2*part.NumVars)
		}
		for _, c := range twoWidth(part) {
			require.Contains(t, all, c)
		}
	}
}

// TestMemoryBudget: a refusal of the base clauses stops the encoding before
// it allocates them; a refusal of the width-two room stops only that search
// (sound, like its other budgets); a done context stops either.
func TestMemoryBudget(t *testing.T) {
	h, err := dbcop.Read(shared.Path(t, "bench", "BL-1k", "hist-00000"), dbcop.Options{DropAborted: true})
	require.NoError(t, err)
	g, reach := pruned(t, h, history.SI)
	full := encode.Encode(g, reach, encode.Options{TwoWidth: true})
	require.Positive(t, full.TwoWidth)

	var asked []string
	refuse := errors.New("no room")
	e, err := encode.EncodeContext(context.Background(), g, reach, encode.Options{TwoWidth: true, Fit: func(need int64, what string) error {
		asked = append(asked, what)
		return refuse
	}})
	require.ErrorIs(t, err, refuse)
	require.Nil(t, e)
	require.Len(t, asked, 1)
	require.Contains(t, asked[0], "the CNF")

	asked = nil
	e, err = encode.EncodeContext(context.Background(), g, reach, encode.Options{TwoWidth: true, Fit: func(need int64, what string) error {
		asked = append(asked, what)
		if strings.Contains(what, "width-two") {
			return refuse
		}
		return nil
	}})
	require.NoError(t, err)
	require.True(t, e.TwoWidthTruncated)
	require.Zero(t, e.TwoWidth)
	require.Equal(t, len(full.Clauses)-full.TwoWidth, len(e.Clauses))
	require.Len(t, asked, 2)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = encode.EncodeContext(ctx, g, reach, encode.Options{TwoWidth: true})
	require.ErrorIs(t, err, context.Canceled)
}
