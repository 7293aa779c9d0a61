package history

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Op keeps its 16 bytes: Src sits in the padding after Kind.
func TestOpSize(t *testing.T) {
	require.Equal(t, uintptr(16), unsafe.Sizeof(Op{}))
}

// A predicate read expands, at Finish, into one read per integer key of
// the history in its range (keys named later included, names excluded),
// at its place; OpAsRead maps the rows back to the operation as read.
func TestSelectExpansion(t *testing.T) {
	b := NewBuilder("mem", "test")
	b.SetInit(InitImplicit, -1)
	s := b.Session(1)
	t1 := b.Begin(s, 1, Committed, Pos{})
	b.Insert(t1, 3, 30)
	b.SelectID(t1, 0, 10, []Version{{b.KeyID(3), b.ValueID(b.KeyID(3), 30)}})
	b.SelectID(t1, 20, 30, nil)
	b.Delete(t1, 3)
	b.SelectID(t1, 0, 10, nil)
	t2 := b.Begin(s, 2, Committed, Pos{})
	b.Write(t2, 5, 1)
	b.WriteID(t2, b.KeyNamed("five"), b.ValueID(b.KeyNamed("five"), 1))
	b.InitSelected(EmptyList)
	b.InitAllKeys(0)
	h := b.Finish()
	require.NoError(t, h.CheckInvariants())
	require.Equal(t, []Select{{Txn: 1, Lo: 0, Hi: 10, At: 1, N: 2}, {Txn: 1, Lo: 20, Hi: 30, At: 3, N: 0}, {Txn: 1, Lo: 0, Hi: 10, At: 4, N: 2}}, h.Selects)
	ops := h.Txns[1].Ops
	require.Len(t, ops, 6)
	want := []struct {
		src OpSrc
		key int64
		val int64
	}{{SrcInsert, 3, 30}, {SrcSelect, 3, 30}, {SrcSelect, 5, EmptyList}, {SrcDelete, 3, EmptyList}, {SrcSelect, 3, EmptyList}, {SrcSelect, 5, EmptyList}}
	for i, w := range want {
		require.Equal(t, w.src, ops[i].Src, i)
		require.Equal(t, w.key, h.Key(ops[i].Key), i)
		require.Equal(t, w.val, h.Value(ops[i].Key, ops[i].Value), i)
	}
	for j, place := range []int{0, 1, 1, 3, 4, 4} {
		got, sel := h.OpAsRead(1, j)
		require.Equal(t, place, got, j)
		require.Equal(t, ops[j].Src == SrcSelect, sel != nil, j)
	}
	// Rows start absent; the named key and the key outside every range at 0.
	init := map[int64]int64{}
	for _, op := range h.Txns[0].Ops {
		init[h.Key(op.Key)] = h.Value(op.Key, op.Value)
	}
	require.Equal(t, EmptyList, init[3])
	require.Equal(t, EmptyList, init[5])
	require.Len(t, init, 3)
	require.True(t, h.HasRows())
	require.Equal(t, 3, h.Stats().PredicateReads)
	require.Empty(t, h.List(ops[1]), "a predicate read's row is no list read")
}

// An aborted transaction's predicate read keeps only the rows it returned
// (no check reads what it observed), yet its range still makes its keys
// rows: T⊥ writes them the empty value under InitSelected.
func TestSelectAbortedKeepsReturnedRows(t *testing.T) {
	b := NewBuilder("mem", "test")
	b.SetInit(InitImplicit, -1)
	s := b.Session(1)
	t1 := b.Begin(s, 1, Committed, Pos{})
	b.Write(t1, 3, 30)
	b.Write(t1, 5, 50)
	b.Write(t1, 7, 70)
	b.Write(t1, 40, 1)
	t2 := b.Begin(s, 2, Aborted, Pos{})
	b.Read(t2, 40, 1)
	b.SelectID(t2, 4, 10, []Version{{b.KeyID(7), b.ValueID(b.KeyID(7), 70)}})
	b.Write(t2, 9, 1)
	t3 := b.Begin(s, 3, Committed, Pos{})
	b.SelectID(t3, 0, 6, []Version{{b.KeyID(3), b.ValueID(b.KeyID(3), 30)}})
	b.InitSelected(EmptyList)
	b.InitAllKeys(0)
	h := b.Finish()
	require.NoError(t, h.CheckInvariants())
	require.Equal(t, []Select{{Txn: 2, Lo: 4, Hi: 10, At: 1, N: 1}, {Txn: 3, Lo: 0, Hi: 6, At: 0, N: 2}}, h.Selects)
	ops := h.Txns[2].Ops
	require.Len(t, ops, 3)
	require.Equal(t, int64(7), h.Key(ops[1].Key))
	require.Equal(t, int64(70), h.Value(ops[1].Key, ops[1].Value))
	got, sel := h.OpAsRead(2, 2)
	require.Equal(t, 2, got)
	require.Nil(t, sel)
	init := map[int64]int64{}
	for _, op := range h.Txns[0].Ops {
		init[h.Key(op.Key)] = h.Value(op.Key, op.Value)
	}
	// 7 and 9 are in the aborted read's range only, 3 and 5 in T3's; 40 in none.
	require.Equal(t, map[int64]int64{3: EmptyList, 5: EmptyList, 7: EmptyList, 9: EmptyList, 40: 0}, init)
}
