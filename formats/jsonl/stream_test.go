package jsonl

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestStreamIncompleteThenComplete: a streamed history says it is
// incomplete until its header is completed in place; the completed file
// reads back as what was streamed.
func TestStreamIncompleteThenComplete(t *testing.T) {
	var out bytes.Buffer
	s, err := NewStream(&out, map[string]string{"store": "memory", "z": "é\n"}, true)
	require.NoError(t, err)
	txns := []StreamTxn{
		{Session: 2, ID: 1, Status: history.Committed, Level: history.SI, Ops: []StreamOp{{Write: true, Key: 1, Val: 5}, {Key: 2, Val: 0}}},
		{Session: 1, ID: 2, Status: history.Aborted, Ops: []StreamOp{{Key: 1, Val: 5}}},
		{Session: 2, ID: 3, Status: history.Unknown, Timed: true, Start: 3, End: math.MaxInt64, Ops: []StreamOp{{Key: 3, Val: history.EmptyList}}},
	}
	for _, tx := range txns {
		require.NoError(t, s.Txn(tx))
	}
	require.NoError(t, s.Flush())
	require.Zero(t, s.Buffered())
	require.EqualValues(t, 3, s.Txns())
	first, _, _ := strings.Cut(out.String(), "\n")
	require.Contains(t, first, `"incomplete":true`)
	require.Len(t, first+"\n", s.HeaderLen())

	// Incomplete: refused (until readers know the field: as an unknown one).
	_, err = Parse(bytes.NewReader(out.Bytes()), "h.jsonl", Options{})
	require.ErrorContains(t, err, IncompleteField)

	done := s.CompleteHeader()
	require.Len(t, done, s.HeaderLen())
	require.NotContains(t, string(done), IncompleteField)
	b := out.Bytes()
	copy(b, done)
	h, err := Parse(bytes.NewReader(b), "h.jsonl", Options{})
	require.NoError(t, err)
	require.Equal(t, "memory", h.Meta["store"])
	require.Equal(t, "é\n", h.Meta["z"])
	require.Equal(t, 3, h.Stats().Transactions)
	require.Len(t, h.Sessions, 2)
	tx := h.Txns[1]
	require.EqualValues(t, 1, tx.ID)
	require.Equal(t, history.SI, tx.Level)
	require.Equal(t, int64(2), h.Sessions[tx.Session].ID)
	require.Equal(t, history.Aborted, h.Txns[2].Status)
	u := h.Txns[3]
	require.Equal(t, history.Unknown, u.Status)
	require.True(t, u.Timed)
	require.Equal(t, int64(math.MaxInt64), u.End)
	require.Equal(t, history.EmptyList, h.Value(u.Ops[0].Key, u.Ops[0].Value))
	require.Equal(t, int64(0), h.Value(h.Txns[history.InitTxn].Ops[0].Key, h.Txns[history.InitTxn].Ops[0].Value))
}
