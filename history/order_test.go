package history_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// A file listed session by session is not interleaved, and EvenProgress
// ranks its transactions as the sessions side by side: session 1's 2
// transactions at ¼ and ¾ of the way, session 2's 4 at ⅛, ⅜, ⅝, ⅞.
func TestEvenProgress(t *testing.T) {
	b := history.NewBuilder("sessions", "test")
	var ids []history.TxnID
	for _, s := range []struct{ session, txns int64 }{{1, 2}, {2, 4}} {
		for i := range s.txns {
			ids = append(ids, b.Begin(b.Session(s.session), s.session*10+i, history.Committed, history.Pos{}))
		}
	}
	h := b.Finish()
	require.False(t, h.Interleaved())
	pos := h.EvenProgress()
	require.Equal(t, int32(0), pos[history.InitTxn])
	// Session 2's first (⅛), session 1's first (¼), session 2's second
	// (⅜), …
	want := []history.TxnID{ids[2], ids[0], ids[3], ids[4], ids[1], ids[5]}
	for i, id := range want {
		require.Equal(t, int32(i+1), pos[id], "transaction %d", id)
	}

	b = history.NewBuilder("interleaved", "test")
	for i := range int64(40) {
		b.Begin(b.Session(i%2), i, history.Committed, history.Pos{})
	}
	require.True(t, b.Finish().Interleaved())
}
