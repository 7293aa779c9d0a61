package strong

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// unknownPlan is what planUnknown settles before encoding: which
// unknown-status transactions are forced in, which are optional (the
// solver decides them, through an inclusion literal each). The rest are
// left out: no read can use them, and leaving them out only removes
// constraints. (What lists need of unknown transactions is settled before,
// by history.ListExplanations: a list history reaches here as registers.)
type unknownPlan struct {
	forced   []bool
	optional []bool
	nOpt     int
	// bad marks the unknown-status transactions that cannot have
	// committed; they stay out.
	bad []bool
}

// include admits the committed transactions, T⊥ and the forced and
// optional unknown-status ones.
func (p *unknownPlan) include(t history.TxnID) bool { return p.forced[t] || p.optional[t] }

// planUnknownAt is planUnknown with each transaction at its own level
// (a mixed history): one inconsistent at its level cannot have committed.
func planUnknownAt(h *history.History, levelOf func(history.TxnID) history.Level) (*unknownPlan, *Violation) {
	n := len(h.Txns)
	bad := make([]bool, n)
	for _, f := range h.ValidateTxns(func(t history.TxnID) bool { return h.Txns[t].Status == history.Unknown }) {
		if f.Kind.ForbiddenAt(levelOf(f.Txn)) {
			bad[f.Txn] = true
		}
	}
	ix := h.Index()
	possible := func(w history.TxnID) bool {
		return w == history.InitTxn || h.Txns[w].Status == history.Committed || (h.Txns[w].Status == history.Unknown && !bad[w])
	}
	// Leaving one out may leave another's read without a writer.
	for changed := true; changed; {
		changed = false
		for t := 1; t < n; t++ {
			if h.Txns[t].Status != history.Unknown || bad[t] {
				continue
			}
			for _, r := range ix.Reads(history.TxnID(t)) {
				if !slices.ContainsFunc(ix.Candidates(history.TxnID(t), r), possible) {
					bad[t], changed = true, true
					break
				}
			}
		}
	}
	p := &unknownPlan{forced: make([]bool, n), optional: make([]bool, n), bad: bad}
	queued := make([]bool, n)
	var queue []history.TxnID
	push := func(t history.TxnID) {
		if !queued[t] {
			queued[t] = true
			queue = append(queue, t)
		}
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.Committed || t == int(history.InitTxn) {
			p.forced[t] = true
			push(history.TxnID(t))
		}
	}

	// Forcing may turn an optional transaction into a forced one, so its
	// reads are revisited with the stronger status.
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		queued[t] = false
		if t == history.InitTxn {
			continue
		}
		certain := p.forced[t]
		for _, r := range ix.Reads(t) {
			var unk []history.TxnID
			settled := false
			for _, w := range ix.Candidates(t, r) {
				switch {
				case p.forced[w]:
					settled = true
				case !bad[w]:
					unk = append(unk, w)
				}
			}
			switch {
			case certain && !settled && len(unk) == 1:
				p.forced[unk[0]] = true
				p.optional[unk[0]] = false
				push(unk[0])
			case certain && !settled && len(unk) == 0:
				return nil, &Violation{Kind: UnwrittenRead, Reader: t, Read: r}
			default:
				// Optional readers make their candidates optional too.
				for _, u := range unk {
					if !p.optional[u] {
						p.optional[u] = true
						push(u)
					}
				}
			}
		}
	}
	for t := range p.optional {
		if p.forced[t] {
			p.optional[t] = false
		}
		if p.optional[t] {
			p.nOpt++
		}
	}

	return p, nil
}

// aroundOptional shortens a cycle where it passes an optional transaction
// by session order or real time alone, in and out: such a step holds
// whether or not the transaction is taken (SplitOptional), so the cycle
// is shown without it and never names a transaction that may be left out
// unless it depends on its being taken.
func aroundOptional(cyc []hyperpolygraph.Edge, optional []bool) []hyperpolygraph.Edge {
	order := func(e hyperpolygraph.Edge) bool { return e.Rel == history.SO || e.Rel == history.RT }
	for changed := true; changed && len(cyc) > 2; {
		changed = false
		for i := range cyc {
			j := (i + 1) % len(cyc)
			a, b := cyc[i], cyc[j]
			if !optional[a.To] || !order(a) || !order(b) {
				continue
			}
			rel := history.RT
			if a.Rel == history.SO && b.Rel == history.SO {
				rel = history.SO
			}
			merged := hyperpolygraph.Edge{From: a.From, To: b.To, Rel: rel, Key: -1}
			next := append([]hyperpolygraph.Edge(nil), cyc[:i]...)
			if j == 0 {
				next = append(cyc[1:i:i], merged)
			} else {
				next = append(next, merged)
				next = append(next, cyc[j+1:]...)
			}
			cyc, changed = next, true
			break
		}
	}
	return cyc
}
