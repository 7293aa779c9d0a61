package dbtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// RowCounts counts what a predicate history holds, as recorded: inserts,
// deletes, range reads (and those that returned a row), point reads of an
// absent row.
type RowCounts struct {
	Inserts, Deletes, Selects, NonEmpty, Absent int
}

// Rows counts h's row operations.
func Rows(h *history.History) RowCounts {
	var c RowCounts
	for _, tx := range h.Txns[1:] {
		for _, op := range tx.Ops {
			switch op.Src {
			case history.SrcInsert:
				c.Inserts++
			case history.SrcDelete:
				c.Deletes++
			case history.SrcPlain:
				if op.Kind == history.OpRead && h.Value(op.Key, op.Value) == history.EmptyList {
					c.Absent++
				}
			}
		}
	}
	for _, s := range h.Selects {
		c.Selects++
		for _, op := range s.Ops(h) {
			if h.Value(op.Key, op.Value) != history.EmptyList {
				c.NonEmpty++
				break
			}
		}
	}
	return c
}

// recorded is the number of operations as the recorder counts them: a
// range read once, not once per key of its range.
func recorded(h *history.History) int {
	n := h.Stats().Operations
	for _, s := range h.Selects {
		n -= int(s.N) - 1
	}
	return n
}

// Predicate runs the predicate workload edited by edit on the store open
// returns, at iso, twice: once built in memory, once streamed as JSONL by
// a Recorder and read back, as "hyperiso collect -o FILE --workload
// predicate" records it. It checks that the summary counts what the
// history holds and that every kind of row operation occurred, and, at
// SERIALIZABLE, that both histories satisfy SER. It returns the history
// read back and its verdict at SER.
func Predicate(t *testing.T, open func() collect.Store, iso collect.Isolation, edit func(c *workload.Config)) (*history.History, check.Verdict) {
	t.Helper()
	w := Workload(t, "predicate", edit)
	built, sum, err := collect.Run(context.Background(), open(), w, collect.Options{Isolation: iso})
	require.NoError(t, err)
	t.Logf("%s", sum)
	require.Equal(t, sum.Planned, sum.Transactions)
	require.Equal(t, sum.Transactions, built.Stats().Transactions)
	require.Equal(t, sum.Operations, recorded(built))
	c := Rows(built)
	t.Logf("%+v", c)
	require.Positive(t, c.Inserts)
	require.Positive(t, c.Deletes)
	require.Positive(t, c.NonEmpty, "some range read returns a row")
	require.Less(t, c.NonEmpty, c.Selects, "some range read returns none")

	var out bytes.Buffer
	rec := collect.NewRecorder(&out)
	_, sum, err = collect.Run(context.Background(), open(), w, collect.Options{Isolation: iso, Sink: rec})
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	h, err := jsonl.Parse(bytes.NewReader(out.Bytes()), "predicate.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, "predicate", h.Meta["workload"])
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
	require.Equal(t, sum.Operations, recorded(h))
	require.Positive(t, len(h.Selects))
	v := Verdict(t, h, history.SER).Verdict
	if iso == collect.Serializable {
		require.Equal(t, check.Satisfied, Verdict(t, built, history.SER).Verdict, "the history built in memory, at SER")
		require.Equal(t, check.Satisfied, v, "the history streamed, at SER")
	}
	return h, v
}
