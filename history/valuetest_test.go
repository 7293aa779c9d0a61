package history

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// valueTestHistory: T1 inserts row 1 = 10 and row 2 = 20; T2 reads
// "keys [0,10) with value in {20}", returned row 2, then reads row 1 = 10.
func valueTestHistory(t *testing.T) *History {
	b := NewBuilder("mem", "test")
	b.SetInit(InitImplicit, -1)
	s1, s2 := b.Session(1), b.Session(2)
	t1 := b.Begin(s1, 1, Committed, Pos{})
	b.Insert(t1, 1, 10)
	b.Insert(t1, 2, 20)
	t2 := b.Begin(s2, 2, Committed, Pos{})
	k2 := b.KeyID(2)
	b.SelectWhereID(t2, 0, 10, &ValueTest{In: []int64{20}, HasIn: true}, []Version{{k2, b.ValueID(k2, 20)}})
	b.Read(t2, 1, 10)
	b.InitSelected(EmptyList)
	b.InitAllKeys(0)
	h := b.Finish()
	require.NoError(t, h.CheckInvariants())
	return h
}

// The row the test rejected reads a stand-in for "absent or 10", whose
// writers are T⊥ and T1; NarrowReads takes the later read of 10 into it
// where T2 has one visible set, and leaves it where its reads are apart.
func TestValueTestStandIn(t *testing.T) {
	h := valueTestHistory(t)
	ops := h.Txns[2].Ops
	require.Len(t, ops, 3)
	row1 := ops[0]
	require.True(t, h.Unreturned(row1))
	require.True(t, h.IsOneOf(row1.Key, row1.Value))
	require.Equal(t, "one of 10|nil", h.ValueString(row1.Key, row1.Value))
	require.Equal(t, []TxnID{0, 1}, h.Index().Writers(row1.Key, row1.Value))
	require.Empty(t, h.Validate(), "the read of 10 fits the stand-in")

	apart := h.NarrowReads(func(TxnID) bool { return true })
	require.Equal(t, row1.Value, apart.Txns[2].Ops[0].Value)
	n := h.NarrowReads(func(TxnID) bool { return false })
	require.NoError(t, n.CheckInvariants())
	nr := n.Txns[2].Ops[0]
	require.True(t, n.Unreturned(nr))
	require.Equal(t, []TxnID{1}, n.Index().Writers(nr.Key, nr.Value))
	require.Empty(t, n.Validate())
	// h itself is unchanged.
	require.Equal(t, row1, h.Txns[2].Ops[0])
	require.Equal(t, []TxnID{0, 1}, h.Index().Writers(row1.Key, row1.Value))

	// The item part: the rejected row left out, the returned one a plain
	// read, no predicate reads.
	items := h.ItemReads()
	require.NoError(t, items.CheckInvariants())
	require.Empty(t, items.Selects)
	require.Len(t, items.Txns[2].Ops, 2)
	require.Equal(t, SrcPlain, items.Txns[2].Ops[0].Src)
	require.Equal(t, int64(2), items.Key(items.Txns[2].Ops[0].Key))
	require.Len(t, h.Txns[2].Ops, 3)
}

// A returned row whose value the test rejects fits no execution: the
// builder refuses it (readers check it first, with a message).
func TestValueTestRejectedRowPanics(t *testing.T) {
	b := NewBuilder("mem", "test")
	t1 := b.Begin(b.Session(1), 1, Committed, Pos{})
	k := b.KeyID(1)
	b.SelectWhereID(t1, 0, 10, &ValueTest{VLo: 0, VHi: 5, HasRange: true}, []Version{{k, b.ValueID(k, 7)}})
	require.Panics(t, func() { b.Finish() })
}

// FlooredMod against its definition: v = q*m + r with q = floor(v/m), so
// r has m's sign (Clojure's mod, which Elle's [:mod m r] uses), computed
// here with big integers so that no overflow is shared with the checker.
func TestFlooredMod(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for _, v := range vals {
		for _, m := range vals {
			if m == 0 {
				continue
			}
			bv, bm := big.NewInt(v), big.NewInt(m)
			q := new(big.Int).Div(bv, bm) // Euclidean: r >= 0
			r := new(big.Int).Sub(bv, new(big.Int).Mul(q, bm))
			if r.Sign() != 0 && m < 0 {
				r.Add(r, bm) // floored: r takes m's sign
			}
			require.Equal(t, r.Int64(), FlooredMod(v, m), "%d mod %d", v, m)
		}
	}
	test := &ValueTest{Mod: 2, Rem: 1, HasMod: true}
	require.True(t, test.Match(3))
	require.True(t, test.Match(-3))
	require.False(t, test.Match(4))
	require.Equal(t, "value mod 2 = 1", test.String())
	require.False(t, test.Equal(&ValueTest{Mod: 2, Rem: 0, HasMod: true}))
	require.True(t, test.Equal(&ValueTest{Mod: 2, Rem: 1, HasMod: true}))
	both := &ValueTest{In: []int64{3, 4}, HasIn: true, Mod: 2, Rem: 0, HasMod: true}
	require.True(t, both.Match(4))
	require.False(t, both.Match(3))
	require.False(t, both.Match(6))
}
