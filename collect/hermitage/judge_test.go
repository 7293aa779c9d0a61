package hermitage

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/history"
)

type op struct {
	write    bool
	key, val int64
}

type tx struct {
	status history.Status
	ops    []op
}

func rd(k, v int64) op { return op{key: k, val: v} }
func wr(k, v int64) op { return op{write: true, key: k, val: v} }

// synthetic builds the history of transactions, one session each.
func synthetic(txs ...tx) *history.History {
	b := history.NewBuilder("synthetic", "collect")
	b.SetInit(history.InitImplicit, -1)
	b.InitAllKeys(0)
	for i, t := range txs {
		id := b.Begin(b.Session(int64(i+1)), int64(i+1), t.status, history.Pos{})
		for _, o := range t.ops {
			if o.write {
				b.Write(id, o.key, o.val)
			} else {
				b.Read(id, o.key, o.val)
			}
		}
	}
	return b.Finish()
}

const (
	ok = history.Committed
	ab = history.Aborted
)

// TestJudgeFindsEachAnomalyAtItsLevel checks the anomaly → level map the
// matrix relies on: the history of each anomaly, as the scenarios would
// record it, violates the scenario's level (and no weaker one where the
// anomaly is the only thing wrong).
func TestJudgeFindsEachAnomalyAtItsLevel(t *testing.T) {
	cases := []struct {
		scenario string
		h        *history.History
		weakest  history.Level
	}{
		{"G1a", synthetic(tx{ab, []op{wr(1, 101)}}, tx{ok, []op{rd(1, 101), rd(2, 0)}}), history.RC},
		{"G1b", synthetic(tx{ok, []op{wr(1, 101), wr(1, 11)}}, tx{ok, []op{rd(1, 101), rd(2, 0)}}), history.RC},
		{"G1c", synthetic(tx{ok, []op{wr(1, 11), rd(2, 22)}}, tx{ok, []op{wr(2, 22), rd(1, 11)}}), history.RC},
		// T3 sees T2's write of 1, then T1's write of 2 that T2
		// overwrote, as its last look shows.
		{"OTV", synthetic(tx{ok, []op{wr(1, 11), wr(2, 19)}}, tx{ok, []op{wr(1, 12), wr(2, 18)}},
			tx{ok, []op{rd(1, 12), rd(2, 19), rd(1, 12), rd(2, 18)}}, tx{ok, []op{rd(1, 12), rd(2, 18)}}), history.RC},
		// Without that last look the version order is open, and only
		// T3's fractured read shows.
		{"OTV", synthetic(tx{ok, []op{wr(1, 11), wr(2, 19)}}, tx{ok, []op{wr(1, 12), wr(2, 18)}},
			tx{ok, []op{rd(1, 12), rd(2, 19)}}, tx{ok, []op{rd(1, 12), rd(2, 18)}}), history.RA},
		{"P4", synthetic(tx{ok, []op{rd(1, 0), wr(1, 11)}}, tx{ok, []op{rd(1, 0), wr(1, 12)}}, tx{ok, []op{rd(1, 12), rd(2, 0)}}), history.SI},
		{"G-single", synthetic(tx{ok, []op{rd(1, 0), rd(2, 18)}}, tx{ok, []op{rd(1, 0), rd(2, 0), wr(1, 12), wr(2, 18)}}), history.RA},
		{"G2-item", synthetic(tx{ok, []op{rd(1, 0), rd(2, 0), wr(1, 11)}}, tx{ok, []op{rd(1, 0), rd(2, 0), wr(2, 21)}}), history.SER},
		// The observer sees T2's write of 1 and T1's of 2: a write cycle
		// shows in a history without version order as the observer's
		// fractured read.
		{"G0", synthetic(tx{ok, []op{wr(1, 11), wr(2, 21)}}, tx{ok, []op{wr(1, 12), wr(2, 22)}}, tx{ok, []op{rd(1, 12), rd(2, 21)}}), history.RA},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			sc, found := Lookup(c.scenario)
			require.True(t, found)
			cell, err := Judge(context.Background(), &Run{Scenario: c.scenario, History: c.h})
			require.NoError(t, err)
			require.Equal(t, c.weakest, cell.Weakest, "anomalies %v", cell.Anomalies)
			require.Len(t, cell.Verdicts, len(Checked))
			if c.weakest <= sc.Level {
				require.True(t, cell.Occurred(sc))
			}
		})
	}
}

// rowTx is a transaction of a synthetic predicate history: its steps as
// the driver records them.
type rowTx []opRecord

func selOp(lo, hi int64, rows ...int64) opRecord {
	r := opRecord{src: history.SrcSelect, key: lo, hi: hi + 1}
	for i := 0; i < len(rows); i += 2 {
		r.rows = append(r.rows, collect.Row{Key: rows[i], Val: rows[i+1]})
	}
	return r
}
func insOp(k, v int64) opRecord { return opRecord{write: true, src: history.SrcInsert, key: k, val: v} }
func delOp(k int64) opRecord    { return opRecord{write: true, src: history.SrcDelete, key: k} }
func wOp(k, v int64) opRecord   { return opRecord{write: true, key: k, val: v} }
func rOp(k, v int64) opRecord   { return opRecord{key: k, val: v} }

// rowHistory builds the history the driver would record for sc from
// transactions that all committed, the last one the observer, as build
// does.
func rowHistory(sc Scenario, txs ...rowTx) *history.History {
	d := &driver{}
	for i, ops := range txs {
		d.txns = append(d.txns, &txn{ops: ops, session: i + 1, out: Outcome{Status: history.Committed}})
	}
	return d.build(&Target{Kind: "synthetic"}, sc, Level{Name: "synthetic"})
}

// TestJudgePredicateScenarios checks the anomaly → level map of the
// predicate scenarios on the histories their anomalies record, RC
// included.
func TestJudgePredicateScenarios(t *testing.T) {
	all := func(rows ...int64) opRecord { return selOp(1, 4, rows...) }
	cases := []struct {
		scenario string
		txs      []rowTx
		weakest  history.Level
	}{
		// T1's first read misses row 3, its second returns it.
		{"PMP", []rowTx{{selOp(3, 3), selOp(1, 3, 1, 10, 2, 20, 3, 30)}, {insOp(3, 30)}, {all(1, 10, 2, 20, 3, 30)}}, history.RA},
		{"PMP", []rowTx{{selOp(3, 3), selOp(1, 3, 1, 10, 2, 20)}, {insOp(3, 30)}, {all(1, 10, 2, 20, 3, 30)}}, history.LevelNone},
		// A row no one writes reads absent from T⊥; one that starts
		// live does not (a thin-air read, which every level forbids).
		{"PMP", []rowTx{{rOp(3, history.EmptyList), selOp(1, 3, 1, 10, 2, 20)}, {all(1, 10, 2, 20)}}, history.LevelNone},
		{"PMP", []rowTx{{rOp(1, history.EmptyList)}, {all(1, 10, 2, 20)}}, history.RC},
		// PostgreSQL's read committed: the delete takes T1's row 2 but
		// not T1's row 3.
		{"PMP-write", []rowTx{{wOp(2, 21), insOp(3, 30)},
			{selOp(1, 3, 1, 10, 2, 20), selOp(1, 3, 1, 10, 2, 21), delOp(1), delOp(2), selOp(1, 3, 3, 30)}, {all(3, 30)}}, history.RA},
		{"G2", []rowTx{{selOp(3, 4), insOp(3, 30)}, {selOp(3, 4), insOp(4, 42)}, {all(1, 10, 2, 20, 3, 30, 4, 42)}}, history.SER},
		{"G2-two-edges", []rowTx{{all(1, 10, 2, 20), wOp(1, 11)}, {wOp(2, 25)}, {all(1, 10, 2, 25)}, {all(1, 11, 2, 25)}}, history.SER},
		// Both read row 1 at 10; T2 deletes it, T1 inserts it anew.
		{"P4-delete", []rowTx{{rOp(1, 10), insOp(1, 11)}, {rOp(1, 10), selOp(1, 1, 1, 10), delOp(1)}, {all(1, 11, 2, 20)}}, history.SI},
		// T1 saw T2's delete: no update is lost.
		{"P4-delete", []rowTx{{rOp(1, history.EmptyList), insOp(1, 11)}, {rOp(1, 10), selOp(1, 1, 1, 10), delOp(1)}, {all(1, 11, 2, 20)}}, history.LevelNone},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			sc, found := Lookup(c.scenario)
			require.True(t, found)
			cell, err := Judge(context.Background(), &Run{Scenario: c.scenario, History: rowHistory(sc, c.txs...)})
			require.NoError(t, err)
			require.Equal(t, c.weakest, cell.Weakest, "anomalies %v", cell.Anomalies)
			require.Equal(t, c.weakest != history.LevelNone, cell.Occurred(sc))
		})
	}
}
