package memstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// smallAppend is an append workload small enough for a quick check and
// dense enough to conflict: 6 sessions × 30 transactions of 1…4
// operations on 5 keys.
func smallAppend(seed int64) func(c *workload.Config) {
	return func(c *workload.Config) { c.Sessions, c.Txns, c.Keys, c.Seed = 6, 30, 5, seed }
}

// lists counts h's appends and list reads, and the longest list read.
func lists(h *history.History) (appends, reads, longest int) {
	for _, tx := range h.Txns[1:] {
		for _, op := range tx.Ops {
			switch op.Kind {
			case history.OpAppend:
				appends++
			case history.OpReadList:
				reads++
				longest = max(longest, len(h.List(op)))
			case history.OpRead, history.OpWrite:
				panic("a register operation in a list history")
			}
		}
	}
	return
}

func TestAppendSerializableAndSnapshot(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		w := dbtest.Workload(t, "append", smallAppend(seed))
		h, sum := run(t, seed, 0, collect.Serializable, w)
		require.True(t, h.HasLists())
		a, r, longest := lists(h)
		require.Positive(t, a)
		require.Positive(t, r)
		require.Greater(t, longest, 2, "lists grow")
		require.Positive(t, sum.Aborted, "the schedule interleaves: some transactions conflict")
		require.Equal(t, check.Satisfied, verdict(t, h, history.SER), "seed %d", seed)

		h, _ = run(t, seed, 0, collect.Snapshot, w)
		require.Equal(t, check.Satisfied, verdict(t, h, history.SI), "seed %d", seed)

		h, _ = run(t, seed, 0, collect.ReadCommitted, w)
		require.Equal(t, check.Satisfied, verdict(t, h, history.RC), "seed %d", seed)
	}
}

// TestAppendSnapshotNotSerializable: snapshot isolation lets two
// transactions that read each other's key before appending to their own
// commit both (a write skew, G2-item), which list reads show.
func TestAppendSnapshotNotSerializable(t *testing.T) {
	violated := false
	for seed := int64(1); seed <= 5 && !violated; seed++ {
		w := dbtest.Workload(t, "append", func(c *workload.Config) {
			c.Sessions, c.Txns, c.Keys, c.Seed = 8, 40, 3, seed
		})
		h, _ := run(t, seed, 0, collect.Snapshot, w)
		require.Equal(t, check.Satisfied, verdict(t, h, history.SI), "seed %d", seed)
		violated = verdict(t, h, history.SER) == check.Violated
	}
	require.True(t, violated, "snapshot isolation shows a write skew on some seed")
}

func TestAppendInjectedBugsAreFound(t *testing.T) {
	t.Run("lost-update", func(t *testing.T) {
		w := dbtest.Workload(t, "append", smallAppend(1))
		h, sum := run(t, 1, memstore.LostUpdate, collect.Snapshot, w)
		require.Zero(t, sum.Aborted, "no write-conflict check, no aborts")
		require.Equal(t, check.Violated, verdict(t, h, history.SI))
	})
	t.Run("fractured-reads", func(t *testing.T) {
		w := dbtest.Workload(t, "append", smallAppend(1))
		h, _ := run(t, 1, memstore.FracturedReads, collect.Snapshot, w)
		require.Equal(t, check.Violated, verdict(t, h, history.SI))
	})
	t.Run("aborted-reads", func(t *testing.T) {
		w := dbtest.Workload(t, "append", func(c *workload.Config) {
			smallAppend(1)(c)
			c.RollbackRate = 0.2
		})
		h, sum := run(t, 1, memstore.AbortedReads, collect.Snapshot, w)
		require.Positive(t, sum.ClientRollbacks)
		res := dbtest.Verdict(t, h, history.RC)
		require.Equal(t, check.Violated, res.Verdict)
	})
	t.Run("stale-reads", func(t *testing.T) {
		w := dbtest.Workload(t, "append", smallAppend(1))
		h, _ := run(t, 1, memstore.StaleReads, collect.Serializable, w)
		require.Equal(t, check.Violated, verdict(t, h, history.SI))
	})
}

// TestAppendRecorded: the streaming recorder writes the run as JSONL that
// reads back as the history Run builds, lists included.
func TestAppendRecorded(t *testing.T) {
	w := dbtest.Workload(t, "append", smallAppend(2))
	built, _ := dbtest.Run(t, memstore.New(memstore.Options{Seed: 2}), w, collect.Serializable)
	var out bytes.Buffer
	rec := collect.NewRecorder(&out)
	_, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 2}), w,
		collect.Options{Isolation: collect.Serializable, Sink: rec})
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	h, err := jsonl.Parse(bytes.NewReader(out.Bytes()), "append.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, "append", h.Meta["workload"])
	require.Equal(t, sum.Transactions, h.Stats().Transactions)
	ba, br, bl := lists(built)
	ha, hr, hl := lists(h)
	require.Equal(t, []int{ba, br, bl}, []int{ha, hr, hl}, "the same run, streamed or built")
	require.Equal(t, check.Satisfied, verdict(t, h, history.SER))
}

// noLists is a store without lists.
type noLists struct{ collect.Store }

func TestAppendRefusedWithoutLists(t *testing.T) {
	w := dbtest.Workload(t, "append", smallAppend(1))
	_, _, err := collect.Run(context.Background(), noLists{memstore.New(memstore.Options{})}, w, collect.Options{})
	var nl *collect.NoListsError
	require.ErrorAs(t, err, &nl)
	require.EqualError(t, err, "the memory store cannot run the append workload: it has no lists (appends and whole-list reads)")
}
