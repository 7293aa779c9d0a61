package strong

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// planUnknown decides which unknown-status transactions take part: those
// some read cannot do without are forced in, those no read can use stay out
// (leaving them out only removes constraints), and the rest are optional.
// An unknown transaction that is itself inconsistent cannot have committed.
// needOne lists sets of unknown transactions of which at least one must
// have committed (the appenders of an observed list element): a set of one
// is forced in, the members of larger sets are optional.
func planUnknown(h *history.History, level history.Level, needOne [][]history.TxnID) (forced []bool, optional []history.TxnID, viol *Violation) {
	forced = make([]bool, len(h.Txns))
	bad := map[history.TxnID]bool{}
	for _, f := range h.ValidateTxns(func(t history.TxnID) bool { return h.Txns[t].Status == history.Unknown }) {
		if f.Kind.ForbiddenAt(level) {
			bad[f.Txn] = true
		}
	}
	ix := h.Index()
	isOpt := map[history.TxnID]bool{}
	queued := make([]bool, len(h.Txns))
	var queue []history.TxnID
	push := func(t history.TxnID) {
		if !queued[t] {
			queued[t] = true
			queue = append(queue, t)
		}
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.Committed {
			push(history.TxnID(t))
		}
	}
	for _, set := range needOne {
		if len(set) == 1 {
			forced[set[0]] = true
			push(set[0])
			continue
		}
		for _, u := range set {
			if !isOpt[u] {
				isOpt[u] = true
				push(u)
			}
		}
	}
	// Forcing may turn an optional transaction into a forced one, so its
	// reads are revisited with the stronger status.
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		queued[t] = false
		certain := h.Txns[t].Status == history.Committed || forced[t]
		for _, r := range ix.Reads(t) {
			var unk []history.TxnID
			settled := false
			for _, w := range ix.Candidates(t, r) {
				switch {
				case h.Txns[w].Status == history.Committed || w == history.InitTxn || forced[w]:
					settled = true
				case !bad[w]:
					unk = append(unk, w)
				}
			}
			switch {
			case certain && !settled && len(unk) == 1:
				forced[unk[0]] = true
				delete(isOpt, unk[0])
				push(unk[0])
			case certain && !settled && len(unk) == 0:
				return nil, nil, &Violation{Kind: UnwrittenRead, Reader: t, Read: r}
			default:
				// Optional readers make their candidates optional too.
				for _, u := range unk {
					if !forced[u] && !isOpt[u] {
						isOpt[u] = true
						push(u)
					}
				}
			}
		}
	}
	for u := range isOpt {
		if !forced[u] {
			optional = append(optional, u)
		}
	}
	slices.Sort(optional)
	return forced, optional, nil
}
