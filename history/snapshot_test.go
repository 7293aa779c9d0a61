package history

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSnapshotsChoose: reads hold at one point of the order, the latest
// before the reader, and a reader whose reads hold at no one point is
// left alone.
func TestSnapshotsChoose(t *testing.T) {
	// Order: T⊥ 0, T1 1, T2 2, T3 3, R 4, R2 5. Key a: T⊥, T1, T3 write it
	// (T1 and T3 the same value); key b: T⊥, T2.
	rank := []int32{0, 1, 2, 3, 4, 5}
	writers := map[KeyID][]TxnID{0: {0, 1, 3}, 1: {0, 2}}
	s := NewSnapshots(rank, 2, func(k KeyID) []TxnID { return writers[k] })
	pick := make([]TxnID, 2)
	// R read a from T1 or T3 and b from T⊥: only before T2, so T1's.
	require.True(t, s.Choose(4, []SnapshotRead{{0, []TxnID{1, 3}}, {1, []TxnID{0}}}, pick))
	require.Equal(t, []TxnID{1, 0}, pick)
	// R read b from T2 too: after T3, so T3's.
	require.True(t, s.Choose(4, []SnapshotRead{{0, []TxnID{1, 3}}, {1, []TxnID{2}}}, pick))
	require.Equal(t, []TxnID{3, 2}, pick)
	// a from T⊥ and b from T2: a's initial version ends at T1, before T2.
	pick = []TxnID{-1, -1}
	require.False(t, s.Choose(5, []SnapshotRead{{0, []TxnID{0}}, {1, []TxnID{2}}}, pick))
	require.Equal(t, []TxnID{-1, -1}, pick, "left alone")
	// Nothing before the reader's own rank.
	require.False(t, s.Choose(1, []SnapshotRead{{0, []TxnID{3}}}, pick[:1]))
}
