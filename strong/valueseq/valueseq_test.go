package valueseq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/valueseq"
	"github.com/hyperiso/hyperiso/verdict"
)

// replay checks a serial order from first principles: every committed
// transaction once, session order kept, and every external read returning
// the value of the latest write before it.
func replay(t *testing.T, h *history.History, order []history.TxnID) {
	t.Helper()
	state := map[history.KeyID]history.ValueID{}
	for _, op := range h.Txns[history.InitTxn].Ops {
		state[op.Key] = op.Value
	}
	seen := map[history.TxnID]bool{}
	last := map[int32]int32{}
	for _, tx := range order {
		require.False(t, seen[tx], "%s twice", h.TxnString(tx))
		seen[tx] = true
		txn := &h.Txns[tx]
		require.NotEqual(t, history.Aborted, txn.Status)
		if p, ok := last[txn.Session]; ok {
			require.Less(t, p, txn.Index, "%s out of session order", h.TxnString(tx))
		}
		last[txn.Session] = txn.Index
		for _, op := range txn.Ops {
			if op.Kind == history.OpWrite {
				state[op.Key] = op.Value
				continue
			}
			v, ok := state[op.Key]
			require.True(t, ok && v == op.Value, "%s reads %d, the key holds %d", h.TxnString(tx), op.Value, v)
		}
	}
	for tx := 1; tx < len(h.Txns); tx++ {
		if h.Txns[tx].Status == history.Committed {
			require.True(t, seen[history.TxnID(tx)], "committed %s missing", h.TxnString(history.TxnID(tx)))
		}
	}
}

// The case: 3,000 transactions in 10 sessions on one key with 5
// values. A serial execution is found, and a read-committed one of reads
// and read-modify-writes (lost updates) is refuted, each in well under the
// issue's minute.
func TestPathological(t *testing.T) {
	for _, stale := range []bool{false, true} {
		h := pathological(1, 10, 300, 5, stale, !stale)
		start := time.Now()
		res, err := valueseq.Decide(context.Background(), h, valueseq.Options{})
		require.NoError(t, err)
		t.Logf("stale=%v: %v, %d states, %d dead ends, %v", stale, res.Verdict, res.States, res.Dead, time.Since(start))
		if stale {
			require.Equal(t, verdict.Violated, res.Verdict)
			continue
		}
		require.Equal(t, verdict.Satisfied, res.Verdict)
		replay(t, h, res.Order)
	}
}

// A search over its budget, or cancelled, says so instead of deciding.
func TestBudgetAndCancel(t *testing.T) {
	h := pathological(1, 10, 300, 5, false, true)
	res, err := valueseq.Decide(context.Background(), h, valueseq.Options{MaxStates: 1})
	require.NoError(t, err)
	require.Equal(t, verdict.Unknown, res.Verdict, "%d states", res.States)
	require.Contains(t, res.Reason, "budget")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = valueseq.Decide(ctx, h, valueseq.Options{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestApplies(t *testing.T) {
	b := history.NewBuilder("two keys", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	t1 := b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	b.Write(t1, 1, 1)
	b.Write(t1, 2, 1)
	why, ok := valueseq.Applies(b.Finish())
	require.False(t, ok)
	require.Equal(t, "more than one key", why)
	_, ok = valueseq.Applies(pathological(1, 2, 3, 2, false, true))
	require.True(t, ok)
}

// On histories too large for the oracle (up to 4 sessions of 25
// transactions; seed 200's 4 × 16 already takes the pipeline seconds), the search agrees with the pipeline (strategy no-probe,
// which does not run it), at SER and SI.
func TestAgreesWithPipeline(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 40
	}
	counts := map[string]int{}
	for seed := range uint64(n) {
		sessions, txns, values := 2+int(seed%3), 5+int(seed%21), 2+int(seed/3%2)
		stale, blind := seed%2 == 0, seed%5 != 0
		h := pathological(seed, sessions, txns, values, stale, blind)
		res, err := valueseq.Decide(context.Background(), h, valueseq.Options{})
		require.NoError(t, err)
		require.NotEqual(t, verdict.Unknown, res.Verdict)
		if res.Verdict == verdict.Satisfied {
			replay(t, h, res.Order)
		}
		for _, level := range []history.Level{history.SER, history.SI} {
			// The pipeline finds some of these hard (which is the point
			// of the search): it gets a second.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			pipe, err := check.Check(ctx, h, level, check.Options{Strategy: "no-probe"})
			late := ctx.Err() != nil
			cancel()
			if late || pipe.Verdict == check.Unknown {
				counts["pipeline undecided"]++
				t.Logf("seed %d at %s: the pipeline did not decide in 1s (%v %s); the search did (%v) in %d states", seed, level, err, pipe.Reason, res.Verdict, res.States)
				continue
			}
			require.NoError(t, err)
			want := verdict.Violated
			if pipe.Verdict == check.Satisfied {
				want = verdict.Satisfied
			}
			require.Equal(t, want, res.Verdict, "seed %d at %s", seed, level)
		}
		counts[res.Verdict.String()]++
	}
	t.Logf("%v", counts)
	require.Greater(t, counts["satisfied"], n/10)
	require.Greater(t, counts["violated"], n/10)
	require.Less(t, counts["pipeline undecided"], n/10)
}

// BenchmarkPathological: the 3,000-transaction shape, satisfied
// (serial) and violated (read committed, read-modify-writes).
func BenchmarkPathological(b *testing.B) {
	for _, stale := range []bool{false, true} {
		h := pathological(1, 10, 300, 5, stale, !stale)
		b.Run(map[bool]string{false: "serial", true: "read-committed"}[stale], func(b *testing.B) {
			for b.Loop() {
				if _, err := valueseq.Decide(context.Background(), h, valueseq.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
