package online

import "github.com/hyperiso/hyperiso/history"

// closure is what the closed sub-history of a prefix (docs/online.md,
// "Certain violations") keeps of it: the transactions whose every read is
// explained by writers already in the stream and kept as well. A
// violation of the closed sub-history is a violation of every extension
// of the stream, provided no (key, value) is written twice in it
// (Options.Unique). Session order needs no closure: what the left-out
// transactions ordered in a session, the session order of the kept ones
// still orders.
type closure struct {
	keep []bool // by TxnID; T⊥ always kept
	open int    // transactions left out
	// dup, when set, is a version written by two transactions (or by one
	// and T⊥, or an aborted write): the promise of unique values is broken.
	dup    bool
	dupTxn history.TxnID
	rows   bool // predicate reads or rows: not decided by closure (left out whole)
}

// noWriter marks a version whose only writer is an aborted write outside
// every transaction: the read is explained (as an aborted read) and
// depends on no transaction.
const noWriter = history.TxnID(-1)

// closeOver computes the closure of h, a prefix of the stream.
func closeOver(h *history.History) closure {
	n := len(h.Txns)
	c := closure{keep: make([]bool, n)}
	if h.HasRows() {
		c.rows = true
		c.keep[history.InitTxn] = true
		c.open = n - 1
		return c
	}
	writer := make(map[history.Version]history.TxnID)
	note := func(v history.Version, t history.TxnID) {
		if w, ok := writer[v]; ok && w != t && !c.dup {
			c.dup, c.dupTxn = true, t
			return
		}
		writer[v] = t
	}
	for t := range h.Txns {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() {
				note(history.Version{Key: op.Key, Value: op.Value}, history.TxnID(t))
			}
		}
	}
	for _, v := range h.AbortedWrites {
		note(v, noWriter)
	}
	// dependents[w] are the readers of w's writes; a reader goes when a
	// writer it read from goes.
	dependents := make([][]history.TxnID, n)
	var queue []history.TxnID
	gone := make([]bool, n)
	drop := func(t history.TxnID) {
		if !gone[t] {
			gone[t] = true
			queue = append(queue, t)
		}
	}
	need := func(t history.TxnID, v history.Version) {
		w, ok := writer[v]
		switch {
		case !ok:
			drop(t)
		case w > history.InitTxn && w != t:
			dependents[w] = append(dependents[w], t)
		}
	}
	for t := 1; t < n; t++ {
		for _, op := range h.Txns[t].Ops {
			switch op.Kind {
			case history.OpRead:
				need(history.TxnID(t), history.Version{Key: op.Key, Value: op.Value})
			case history.OpReadList:
				for _, e := range h.List(op) {
					need(history.TxnID(t), history.Version{Key: op.Key, Value: e})
				}
			}
		}
	}
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, d := range dependents[t] {
			drop(d)
		}
	}
	for t := range c.keep {
		c.keep[t] = !gone[t]
		if gone[t] {
			c.open++
		}
	}
	return c
}
