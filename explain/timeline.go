package explain

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// Bounds of a timeline: a history with at most TimelineSessions sessions
// and TimelineTxns transactions is shown whole; a larger one shows the
// sessions of the counterexample's transactions (at most TimelineSessions)
// and, in them, at most TimelineTxns transactions: windows around the
// counterexample's, grown one step on either side of each in turn.
const (
	TimelineSessions = 40
	TimelineTxns     = 400
)

// timelineOps bounds the operations a transaction's summary spells out.
const timelineOps = 6

// Timeline is the history around a counterexample, session by session, for
// drawing it as lanes: the sessions the counterexample's transactions
// belong to and, in each, a window of transactions around them (the whole
// history when it is small), with counts of what is left out.
type Timeline struct {
	// Timed says that every transaction shown has a real-time interval
	// (Time: Jepsen :index or :time, JSONL "time"); otherwise transactions
	// are placed by their position in session order (Index).
	Timed bool `json:"timed"`
	// Whole says that the whole history is shown.
	Whole bool `json:"whole"`
	// Total counts the history's transactions (T⊥ not included), Shown
	// those shown.
	Total int `json:"total"`
	Shown int `json:"shown"`
	// Sessions are the sessions shown, in the history's order.
	Sessions []TimelineSession `json:"sessions"`
	// MoreSessions counts the history's sessions not shown.
	MoreSessions int `json:"more_sessions"`
	// Keys are the keys the counterexample's transactions touch, written as
	// the reports write them (a key's name, or its number): the keys of the
	// cycle's edges in cycle order, then the others, numbers in ascending
	// order before names in alphabetical order.
	Keys []string `json:"keys"`
	// Edges are the cycle's edges, then (Context) the other certain
	// dependencies among the counterexample's transactions except session
	// order, which the lanes show.
	Edges []TimelineEdge `json:"edges"`
	// InitID is the id of T⊥, which a weak level's cycle can pass through.
	InitID int64 `json:"init_id"`
}

// TimelineSession is one session of a timeline.
type TimelineSession struct {
	ID int64 `json:"id"`
	// Size counts the session's transactions.
	Size int `json:"size"`
	// Txns are the transactions shown, in session order.
	Txns []TimelineTxn `json:"transactions"`
	// MoreAfter counts the session's transactions after the last one
	// shown.
	MoreAfter int `json:"more_after,omitempty"`
}

// TimelineTxn is one transaction of a timeline.
type TimelineTxn struct {
	ID int64 `json:"id"`
	// Index is the position in the session.
	Index  int    `json:"index"`
	Status string `json:"status"`
	// MoreBefore counts the session's transactions left out between the
	// previous one shown (or the session's start) and this one.
	MoreBefore int `json:"more_before,omitempty"`
	// Time is the real-time interval, when the history has one for it.
	Time *Interval `json:"time,omitempty"`
	// Ops summarises the operations (the first few, then "+N"); NOps
	// counts them.
	Ops  string `json:"ops"`
	NOps int    `json:"n_ops"`
	// Keys are the keys the transaction touches, as in Timeline.Keys.
	Keys []string `json:"keys"`
	// Counterexample marks the counterexample's transactions, Cycle those
	// at an end of one of its cycle's edges.
	Counterexample bool `json:"counterexample,omitempty"`
	Cycle          bool `json:"cycle,omitempty"`
}

// Interval is a transaction's invocation and completion.
type Interval struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Open says that the completion is not known (an :info operation): the
	// transaction may take effect at any later time; End is then Start.
	Open bool `json:"open,omitempty"`
}

// TimelineEdge is one dependency drawn between two transactions (by id).
type TimelineEdge struct {
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Relation string `json:"relation"`
	// Key is the edge's key as in Timeline.Keys, when it has one.
	Key string `json:"key,omitempty"`
	// Context marks a dependency that is not on the cycle.
	Context bool `json:"context,omitempty"`
}

// timelineLimits are the bounds a timeline is built with (the constants,
// smaller in tests).
type timelineLimits struct{ sessions, txns int }

var defaultTimelineLimits = timelineLimits{TimelineSessions, TimelineTxns}

// newTimeline builds the timeline of h around the transactions ce (h's
// TxnIDs, T⊥ not included) with the cycle's edges and the context edges.
func newTimeline(h *history.History, ce []history.TxnID, cycle, context []check.Edge, lim timelineLimits) *Timeline {
	tl := &Timeline{Total: len(h.Txns) - 1, InitID: h.Txns[history.InitTxn].ID, Sessions: []TimelineSession{}, Keys: []string{}, Edges: []TimelineEdge{}}
	inCE := make(map[history.TxnID]bool, len(ce))
	for _, t := range ce {
		if t != history.InitTxn {
			inCE[t] = true
		}
	}
	onCycle := map[int64]bool{}
	for _, e := range cycle {
		onCycle[e.From], onCycle[e.To] = true, true
	}
	cyc := func(t history.TxnID) bool { return inCE[t] && onCycle[h.Txns[t].ID] }

	// shown[s] marks the shown positions of session s (nil: none).
	shown := make([][]bool, len(h.Sessions))
	if len(h.Sessions) <= lim.sessions && tl.Total <= lim.txns {
		tl.Whole = true
		for s := range h.Sessions {
			shown[s] = make([]bool, len(h.Sessions[s].Txns))
			for i := range shown[s] {
				shown[s][i] = true
			}
		}
	} else {
		windows(h, ce, inCE, cyc, shown, lim)
	}

	// Keys as the reports write them, the counterexample's in order: the
	// cycle's keys first, then those its transactions touch.
	keyStr := map[int64]string{}
	var ceKeys []string
	seenKey := map[string]bool{}
	addKey := func(k string) {
		if !seenKey[k] {
			seenKey[k] = true
			ceKeys = append(ceKeys, k)
		}
	}
	for _, t := range ce {
		for _, op := range h.Txns[t].Ops {
			keyStr[h.Key(op.Key)] = h.KeyString(op.Key)
		}
	}
	edgeKey := func(e check.Edge) string {
		switch {
		case e.Key == nil:
			return ""
		case e.KeyName != "":
			return e.KeyName
		}
		if s, ok := keyStr[*e.Key]; ok {
			return s
		}
		return fmt.Sprint(*e.Key)
	}
	for _, e := range cycle {
		if k := edgeKey(e); k != "" {
			addKey(k)
		}
	}
	nCycle := len(ceKeys)
	for _, t := range ce {
		for _, op := range h.Txns[t].Ops {
			addKey(h.KeyString(op.Key))
		}
	}
	sort.SliceStable(ceKeys[nCycle:], func(i, j int) bool { return keyLess(ceKeys[nCycle+i], ceKeys[nCycle+j]) })
	if ceKeys != nil {
		tl.Keys = ceKeys
	}
	for _, e := range cycle {
		tl.Edges = append(tl.Edges, TimelineEdge{From: e.From, To: e.To, Relation: e.Relation, Key: edgeKey(e)})
	}
	for _, e := range context {
		if e.Relation != "so" {
			tl.Edges = append(tl.Edges, TimelineEdge{From: e.From, To: e.To, Relation: e.Relation, Key: edgeKey(e), Context: true})
		}
	}

	timed := true
	for s, marks := range shown {
		if marks == nil {
			tl.MoreSessions++
			continue
		}
		sess := h.Sessions[s]
		ts := TimelineSession{ID: sess.ID, Size: len(sess.Txns), Txns: []TimelineTxn{}}
		gap := 0
		for i, t := range sess.Txns {
			if !marks[i] {
				gap++
				continue
			}
			tx := &h.Txns[t]
			v := TimelineTxn{ID: tx.ID, Index: int(tx.Index), Status: tx.Status.String(), MoreBefore: gap,
				NOps: len(tx.Ops), Ops: opsSummary(h, tx.Ops), Keys: txnKeys(h, tx.Ops), Counterexample: inCE[t], Cycle: cyc(t)}
			gap = 0
			if tx.Timed {
				v.Time = &Interval{Start: tx.Start, End: tx.End}
				if tx.End == math.MaxInt64 {
					v.Time.End, v.Time.Open = tx.Start, true
				}
			} else {
				timed = false
			}
			ts.Txns = append(ts.Txns, v)
			tl.Shown++
		}
		ts.MoreAfter = gap
		tl.Sessions = append(tl.Sessions, ts)
	}
	tl.Timed = timed && tl.Shown > 0
	return tl
}

// windows marks in shown the transactions of a large history's timeline:
// the sessions of the counterexample's transactions (those on the cycle
// first when there are too many), and in them windows around each of its
// transactions, grown one step before and after each in turn until the
// budget of transactions is spent or the sessions are.
func windows(h *history.History, ce []history.TxnID, inCE map[history.TxnID]bool, cyc func(history.TxnID) bool, shown [][]bool, lim timelineLimits) {
	// The anchors: the counterexample's transactions, those on the cycle
	// first, then in history order.
	anchors := make([]history.TxnID, 0, len(inCE))
	for t := range inCE {
		anchors = append(anchors, t)
	}
	sort.Slice(anchors, func(i, j int) bool {
		a, b := anchors[i], anchors[j]
		if cyc(a) != cyc(b) {
			return cyc(a)
		}
		return a < b
	})
	sessions := 0
	kept := anchors[:0]
	for _, t := range anchors {
		s := h.Txns[t].Session
		if shown[s] == nil {
			if sessions == lim.sessions {
				continue
			}
			sessions++
			shown[s] = make([]bool, len(h.Sessions[s].Txns))
		}
		if len(kept) < lim.txns {
			kept = append(kept, t)
		}
	}
	count := 0
	longest := 0
	for _, t := range kept {
		tx := &h.Txns[t]
		shown[tx.Session][tx.Index] = true
		count++
		longest = max(longest, len(shown[tx.Session]))
	}
	for r := 1; r < longest && count < lim.txns; r++ {
		for _, t := range kept {
			tx := &h.Txns[t]
			marks := shown[tx.Session]
			for _, i := range [2]int{int(tx.Index) - r, int(tx.Index) + r} {
				if i >= 0 && i < len(marks) && !marks[i] && count < lim.txns {
					marks[i] = true
					count++
				}
			}
		}
	}
}

// opsSummary spells out the first operations of a transaction.
func opsSummary(h *history.History, ops []history.Op) string {
	var b strings.Builder
	for i, op := range ops {
		if i == timelineOps {
			fmt.Fprintf(&b, " +%d", len(ops)-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		k := h.KeyString(op.Key)
		switch op.Kind {
		case history.OpAppend:
			fmt.Fprintf(&b, "append(%s,%s)", k, h.ValueString(op.Key, op.Value))
		case history.OpReadList:
			list := h.List(op)
			var parts []string
			for j, v := range list {
				if j == 3 && len(list) > 4 {
					parts = append(parts, fmt.Sprintf("…+%d", len(list)-j))
					break
				}
				parts = append(parts, h.ValueString(op.Key, v))
			}
			fmt.Fprintf(&b, "r(%s)=[%s]", k, strings.Join(parts, " "))
		default:
			fmt.Fprintf(&b, "%s(%s)=%s", op.Kind, k, h.ValueString(op.Key, op.Value))
		}
	}
	return b.String()
}

// txnKeys lists the keys ops touch, each once, in order.
func txnKeys(h *history.History, ops []history.Op) []string {
	out := []string{}
	seen := map[history.KeyID]bool{}
	for _, op := range ops {
		if !seen[op.Key] {
			seen[op.Key] = true
			out = append(out, h.KeyString(op.Key))
		}
	}
	return out
}

// keyLess orders keys as written: numbers by value, before names.
func keyLess(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case (errA == nil) != (errB == nil):
		return errA == nil
	}
	return a < b
}
