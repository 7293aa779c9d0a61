package explain

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// gridHistory builds sessions × perSession committed transactions, ids
// 1000·session + index, each writing key index%5 and reading key 7; with
// timed, transaction i of a session runs from 10i to 10i+5 (plus the
// session's number, so that sessions interleave).
func gridHistory(sessions, perSession int, timed bool) *history.History {
	b := history.NewBuilder("grid", "test")
	b.InitAllKeys(0)
	for s := 0; s < sessions; s++ {
		si := b.Session(int64(s + 1))
		for i := 0; i < perSession; i++ {
			t := b.Begin(si, int64(1000*(s+1)+i), history.Committed, history.Pos{})
			b.Write(t, int64(i%5), int64(1000*(s+1)+i))
			b.Read(t, 7, 0)
			if timed {
				b.SetInterval(t, int64(10*i+s), int64(10*i+s+5))
			}
		}
	}
	return b.Finish()
}

// txnAt returns the TxnID of the index-th transaction of session s (0-based).
func txnAt(h *history.History, s, index int) history.TxnID { return h.Sessions[s].Txns[index] }

// shownIndexes returns, per session id, the indexes shown.
func shownIndexes(tl *Timeline) map[int64][]int {
	out := map[int64][]int{}
	for _, s := range tl.Sessions {
		for _, t := range s.Txns {
			out[s.ID] = append(out[s.ID], t.Index)
		}
	}
	return out
}

// checkMarkers checks that the "… N more" counts of every session add up
// with what is shown to the session's size, and that each MoreBefore is
// the distance to the previous transaction shown.
func checkMarkers(t *testing.T, tl *Timeline) {
	t.Helper()
	shown := 0
	for _, s := range tl.Sessions {
		n, prev := s.MoreAfter, -1
		for _, tx := range s.Txns {
			require.Equal(t, tx.Index-prev-1, tx.MoreBefore, "session %d, txn %d", s.ID, tx.ID)
			prev = tx.Index
			n += 1 + tx.MoreBefore
		}
		require.Equal(t, s.Size-1-prev, s.MoreAfter, "session %d", s.ID)
		require.Equal(t, s.Size, n, "session %d", s.ID)
		shown += len(s.Txns)
	}
	require.Equal(t, tl.Shown, shown)
}

func TestTimelineWholeWhenSmall(t *testing.T) {
	h := gridHistory(3, 4, false)
	ce := []history.TxnID{txnAt(h, 0, 1), txnAt(h, 2, 3)}
	cycle := []check.Edge{{From: 1001, To: 3003, Relation: "ww", Key: ptr(int64(1))}, {From: 3003, To: 1001, Relation: "rw", Key: ptr(int64(3))}}
	tl := newTimeline(h, ce, cycle, nil, defaultTimelineLimits)
	require.True(t, tl.Whole)
	require.False(t, tl.Timed)
	require.Equal(t, 12, tl.Total)
	require.Equal(t, 12, tl.Shown)
	require.Zero(t, tl.MoreSessions)
	require.Len(t, tl.Sessions, 3)
	checkMarkers(t, tl)
	for _, s := range tl.Sessions {
		require.Zero(t, s.MoreAfter)
		for _, tx := range s.Txns {
			require.Zero(t, tx.MoreBefore)
			require.Nil(t, tx.Time, "no real time: placed by index")
			want := tx.ID == 1001 || tx.ID == 3003
			require.Equal(t, want, tx.Counterexample, tx.ID)
			require.Equal(t, want, tx.Cycle, tx.ID)
		}
	}
	tx := tl.Sessions[0].Txns[1]
	require.Equal(t, "w(1)=1001 r(7)=0", tx.Ops)
	require.Equal(t, 2, tx.NOps)
	require.Equal(t, []string{"1", "7"}, tx.Keys)
	// The cycle's keys first, then the others the counterexample touches.
	require.Equal(t, []string{"1", "3", "7"}, tl.Keys)
	require.Equal(t, []TimelineEdge{{From: 1001, To: 3003, Relation: "ww", Key: "1"}, {From: 3003, To: 1001, Relation: "rw", Key: "3"}}, tl.Edges)
}

func ptr[T any](v T) *T { return &v }

// TestTimelineWindows: a history past the bounds shows only the
// counterexample's sessions, and in them windows centred on its
// transactions that together hold exactly the budget, with markers for
// the rest.
func TestTimelineWindows(t *testing.T) {
	h := gridHistory(3, 1000, false)
	a, b, c := txnAt(h, 0, 500), txnAt(h, 1, 10), txnAt(h, 1, 990)
	tl := newTimeline(h, []history.TxnID{a, b, c}, nil, nil, defaultTimelineLimits)
	require.False(t, tl.Whole)
	require.Equal(t, 3000, tl.Total)
	require.Equal(t, TimelineTxns, tl.Shown)
	require.Equal(t, 1, tl.MoreSessions)
	require.Len(t, tl.Sessions, 2)
	checkMarkers(t, tl)
	idx := shownIndexes(tl)
	// Around 500: a contiguous window centred on it.
	s1 := idx[1]
	require.Equal(t, s1[len(s1)-1]-s1[0]+1, len(s1), "contiguous")
	require.Equal(t, 500-s1[0], s1[len(s1)-1]-500, "centred")
	require.Equal(t, s1[0], tl.Sessions[0].Txns[0].MoreBefore)
	require.Positive(t, tl.Sessions[0].MoreAfter)
	// Session 2: from its start (the window around 10 hits it) and around
	// 990, with a marker between.
	s2 := idx[2]
	require.Equal(t, 0, s2[0])
	gap := 0
	for _, tx := range tl.Sessions[1].Txns {
		if tx.MoreBefore > 0 {
			gap++
			require.Greater(t, tx.Index, 500)
		}
	}
	require.Equal(t, 1, gap, "one marker between the two windows")
	require.Contains(t, s2, 990)
	require.Equal(t, 999, s2[len(s2)-1], "the window around 990 reaches the session's end")
	// Every counterexample transaction is shown and marked.
	marked := 0
	for _, s := range tl.Sessions {
		for _, tx := range s.Txns {
			if tx.Counterexample {
				marked++
			}
		}
	}
	require.Equal(t, 3, marked)
}

// TestTimelineSessionBound: too many sessions keeps those of the cycle's
// transactions first, within the bound, and counts the rest.
func TestTimelineSessionBound(t *testing.T) {
	h := gridHistory(10, 30, false)
	var ce []history.TxnID
	for s := 0; s < 6; s++ {
		ce = append(ce, txnAt(h, s, 15))
	}
	// The cycle is between the transactions of sessions 5 and 6.
	cycle := []check.Edge{{From: 5015, To: 6015, Relation: "wr"}, {From: 6015, To: 5015, Relation: "rw"}}
	tl := newTimeline(h, ce, cycle, nil, timelineLimits{sessions: 4, txns: 30})
	require.Len(t, tl.Sessions, 4)
	require.Equal(t, 6, tl.MoreSessions)
	var ids []int64
	for _, s := range tl.Sessions {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []int64{1, 2, 5, 6}, ids, "the cycle's sessions, then the first others, in history order")
	require.Equal(t, 30, tl.Shown)
	checkMarkers(t, tl)
	// 4 windows grown in turn, centred on 15: 3 rounds give each 7, and
	// the cycle's first transaction takes the last 2 of the budget.
	for id, xs := range shownIndexes(tl) {
		want := 7
		if id == 5 {
			want = 9
		}
		require.Len(t, xs, want, id)
		require.Equal(t, 15-xs[0], xs[len(xs)-1]-15, id)
	}
}

// TestTimelineTime: with real time every transaction carries its
// interval; an :info transaction's is open; one untimed transaction shown
// puts the timeline back on session order.
func TestTimelineTime(t *testing.T) {
	h := gridHistory(2, 5, true)
	h.Txns[txnAt(h, 1, 4)].End = math.MaxInt64
	tl := newTimeline(h, []history.TxnID{txnAt(h, 0, 2)}, nil, nil, defaultTimelineLimits)
	require.True(t, tl.Timed)
	for _, s := range tl.Sessions {
		for _, tx := range s.Txns {
			require.NotNil(t, tx.Time)
			sess := int64(s.ID - 1)
			require.Equal(t, 10*int64(tx.Index)+sess, tx.Time.Start)
			if s.ID == 2 && tx.Index == 4 {
				require.True(t, tx.Time.Open)
				require.Equal(t, tx.Time.Start, tx.Time.End)
				continue
			}
			require.False(t, tx.Time.Open)
			require.Equal(t, tx.Time.Start+5, tx.Time.End)
		}
	}
	h.Txns[txnAt(h, 1, 0)].Timed = false
	tl = newTimeline(h, []history.TxnID{txnAt(h, 0, 2)}, nil, nil, defaultTimelineLimits)
	require.False(t, tl.Timed)
	require.Nil(t, tl.Sessions[1].Txns[0].Time)
	require.NotNil(t, tl.Sessions[0].Txns[0].Time)
}

// TestTimelineSummaries: long transactions and lists are cut short; keys
// by name; context edges other than session order are kept, marked.
func TestTimelineSummaries(t *testing.T) {
	b := history.NewBuilder("names", "test")
	b.InitAllKeys(0)
	s := b.Session(1)
	t1 := b.Begin(s, 1, history.Committed, history.Pos{})
	b.SetKeyName(100, "acct")
	for i := 0; i < 8; i++ {
		b.Write(t1, 100, int64(i+1))
	}
	t2 := b.Begin(s, 2, history.Aborted, history.Pos{})
	b.ReadList(t2, 5, []int64{1, 2, 3, 4, 5, 6}, history.EmptyList)
	h := b.Finish()
	ctxEdges := []check.Edge{{From: 1, To: 2, Relation: "so"}, {From: 1, To: 2, Relation: "wr", Key: ptr(int64(100))}}
	tl := newTimeline(h, []history.TxnID{1, 2}, nil, ctxEdges, defaultTimelineLimits)
	txs := tl.Sessions[0].Txns
	require.Equal(t, "w(acct)=1 w(acct)=2 w(acct)=3 w(acct)=4 w(acct)=5 w(acct)=6 +2", txs[0].Ops)
	require.Equal(t, 8, txs[0].NOps)
	require.Equal(t, []string{"acct"}, txs[0].Keys)
	require.Equal(t, "r(5)=[1 2 3 …+3]", txs[1].Ops)
	require.Equal(t, "aborted", txs[1].Status)
	require.Equal(t, []string{"5", "acct"}, tl.Keys, "no cycle: numbers, then names")
	require.Equal(t, []TimelineEdge{{From: 1, To: 2, Relation: "wr", Key: "acct", Context: true}}, tl.Edges)
}

// TestTimelineInReport: Explain fills the timeline of each
// counterexample, and it survives the JSON report.
func TestTimelineInReport(t *testing.T) {
	h := readHistory(t, "../testdata/explain/g2-item.jsonl")
	rep, err := Explain(context.Background(), h, history.SER, Options{})
	require.NoError(t, err)
	ce := rep.Explanation.Counterexamples[0]
	tl := ce.Timeline
	require.NotNil(t, tl)
	require.True(t, tl.Whole)
	require.Equal(t, 4, tl.Shown)
	require.Len(t, tl.Edges, len(ce.Edges))
	onCycle := 0
	for _, s := range tl.Sessions {
		for _, tx := range s.Txns {
			if tx.Cycle {
				onCycle++
			}
		}
	}
	require.Equal(t, 2, onCycle)
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, tl, back.Explanation.Counterexamples[0].Timeline)
}
