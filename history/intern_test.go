package history

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValTableMatchesMap checks the interning table (get and put, find
// and putAt) against a Go map on random pairs, including clustered keys
// and extreme values.
func TestValTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	type pair struct {
		k   KeyID
		val int64
	}
	ref := map[pair]ValueID{}
	var tab valTable
	extremes := []int64{0, -1, 1, 1 << 62, -1 << 63, 1<<63 - 1}
	for i := range 200000 {
		p := pair{KeyID(rng.IntN(300)), rng.Int64N(2000) - 1000}
		switch i % 7 {
		case 0:
			p.val = extremes[rng.IntN(len(extremes))]
		case 1:
			p.k = KeyID(rng.Int32())
			p.val = rng.Int64()
		}
		want, ok := ref[p]
		got, gok := tab.get(p.k, p.val)
		require.Equal(t, ok, gok, "%v", p)
		// find and putAt, half the time, must do what get and put do.
		fv, slot, fok := tab.find(p.k, 0, p.val)
		require.Equal(t, ok, fok, "%v", p)
		if ok {
			require.Equal(t, want, got, "%v", p)
			require.Equal(t, want, fv, "%v", p)
			continue
		}
		v := ValueID(len(ref))
		ref[p] = v
		if i%2 == 0 {
			tab.putAt(slot, p.k, p.val, v)
		} else {
			tab.put(p.k, p.val, v)
		}
	}
	require.Equal(t, len(ref), tab.n)
	for p, v := range ref {
		got, ok := tab.get(p.k, p.val)
		require.True(t, ok)
		require.Equal(t, v, got)
	}
}

// TestBuilderInterleavedOps: operations added to transactions out of order
// (a reader pairing invocations with completions) land in program order
// on the right transaction.
func TestBuilderInterleavedOps(t *testing.T) {
	b := NewBuilder("x", "y")
	s := b.Session(1)
	t1 := b.Begin(s, 1, Committed, Pos{})
	t2 := b.Begin(s, 2, Committed, Pos{})
	t3 := b.Begin(s, 3, Committed, Pos{})
	b.Write(t1, 1, 10)
	b.Write(t2, 1, 20)
	b.Write(t1, 2, 11) // t1 no longer at the end: detached
	b.Read(t3, 1, 20)
	b.Write(t2, 2, 21)
	b.Write(t1, 3, 12)
	require.Len(t, b.Ops(t1), 3)
	h := b.Finish()
	got := func(tx TxnID) (out [][2]int64) {
		for _, op := range h.Txns[tx].Ops {
			out = append(out, [2]int64{h.Keys[op.Key], h.Values[op.Key][op.Value]})
		}
		return out
	}
	require.Equal(t, [][2]int64{{1, 10}, {2, 11}, {3, 12}}, got(t1))
	require.Equal(t, [][2]int64{{1, 20}, {2, 21}}, got(t2))
	require.Equal(t, [][2]int64{{1, 20}}, got(t3))
	require.Equal(t, OpRead, h.Txns[t3].Ops[0].Kind)
	require.Equal(t, cap(h.Txns[t1].Ops), len(h.Txns[t1].Ops))
}

// TestValueIDShortcutSkipsNames: a named value's stand-in (0 until Finish)
// never answers for the integer 0, first or last in the key's values.
func TestValueIDShortcutSkipsNames(t *testing.T) {
	b := NewBuilder("x", "y")
	k := b.KeyNamed("k")
	named := b.ValueNamed(k, "v")
	zero := b.ValueID(k, 0)
	require.NotEqual(t, named, zero)
	require.Equal(t, zero, b.ValueID(k, 0))
	k2 := b.KeyID(7)
	require.Equal(t, ValueID(0), b.ValueID(k2, 5))
	require.Equal(t, ValueID(1), b.ValueID(k2, 6))
	require.Equal(t, ValueID(0), b.ValueID(k2, 5))
	require.Equal(t, ValueID(1), b.ValueID(k2, 6))
	require.Equal(t, k2, b.KeyID(7))
	h := b.Finish()
	require.NotEqual(t, h.Values[k][named], h.Values[k][zero])
	require.Equal(t, []int64{5, 6}, h.Values[k2])
}

// TestValueIDMatchesMap: interning through the Builder (small keys
// scanned, large ones in the table, everything in the table once a value
// is named) gives each (key, value) one id, the index of its first
// appearance among the key's values.
func TestValueIDMatchesMap(t *testing.T) {
	for _, nameAt := range []int{-1, 0, 3000, 20000} {
		rng := rand.New(rand.NewPCG(5, uint64(nameAt+1)))
		b := NewBuilder("x", "y")
		type pair struct {
			k   KeyID
			val int64
		}
		ref := map[pair]ValueID{}
		next := map[KeyID]ValueID{}
		var keys []KeyID
		for range 40 {
			keys = append(keys, b.KeyID(rng.Int64()))
		}
		for i := range 30000 {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(4) == 0 {
				k = keys[0] // one key with many values
			}
			if i == nameAt {
				v := b.ValueNamed(k, "name")
				require.Equal(t, next[k], v)
				next[k]++
			}
			p := pair{k, rng.Int64N(60)}
			if rng.IntN(3) == 0 {
				p.val = int64(i) // fresh
			}
			want, ok := ref[p]
			if !ok {
				want = next[k]
				ref[p] = want
				next[k]++
			}
			require.Equal(t, want, b.ValueID(p.k, p.val), "step %d %v", i, p)
		}
	}
}

// TestAddValue: values given with AddValue are numbered with the key's
// interned ones, in order, and laid out with them by Finish.
func TestAddValue(t *testing.T) {
	b := NewBuilder("x", "test")
	tx := b.Begin(b.Session(1), 1, Committed, Pos{})
	k := b.KeyID(7)
	b.WriteID(tx, k, b.ValueID(k, 10))
	v := b.AddValue(k, 20)
	b.WriteID(tx, k, v)
	b.WriteID(tx, k, b.ValueID(k, 30))
	k2 := b.KeyID(8)
	b.ReadID(tx, k2, b.AddValue(k2, 20))
	h := b.Finish()
	require.Equal(t, ValueID(1), v)
	require.Equal(t, [][]int64{{10, 20, 30}, {20}}, h.Values)
	require.Equal(t, []Op{{Kind: OpWrite, Key: k, Value: 0}, {Kind: OpWrite, Key: k, Value: 1}, {Kind: OpWrite, Key: k, Value: 2}, {Kind: OpRead, Key: k2, Value: 0}}, h.Txns[1].Ops)
}

// TestKeyTableMatchesMap: keys dense from 0, sparse, negative and extreme,
// and keys first too far for the flat array that it later covers, are
// interned as a map interns them.
func TestKeyTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for round := range 4 {
		ref := map[int64]KeyID{}
		var tab keyTable
		for i := range 60000 {
			var key int64
			switch rng.IntN(6) {
			case 0:
				key = rng.Int64()
			case 1:
				key = -rng.Int64N(1000)
			case 2:
				key = rng.Int64N(denseSpread * int64(len(ref)+1) * 2)
			default:
				key = rng.Int64N(int64(2000 + round*100000))
			}
			if i%1000 == 0 {
				key = []int64{1<<63 - 1, -1 << 63, denseKeys, denseKeys - 1}[rng.IntN(4)]
			}
			want, ok := ref[key]
			tab.touch(key) // a hint only: it must not fail on any key
			got, gok := tab.get(key)
			require.Equal(t, ok, gok, "key %d", key)
			if ok {
				require.Equal(t, want, got, "key %d", key)
				continue
			}
			ref[key] = KeyID(len(ref))
			tab.put(key, KeyID(len(ref)-1), len(ref))
		}
		require.NotEmpty(t, tab.dense, "round %d", round)
		require.NotZero(t, tab.sparse.n, "round %d", round)
		for key, k := range ref {
			got, ok := tab.get(key)
			require.True(t, ok, "key %d", key)
			require.Equal(t, k, got, "key %d", key)
		}
	}
}
