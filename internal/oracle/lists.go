package oracle

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// # List reads at the weak levels
//
// A committed transaction's read of a whole list (OpReadList) says, with
// one version order per key (Adya, Elle):
//
//   - every element was appended by a transaction that may have committed:
//     otherwise the history is violated (garbage or aborted element); a
//     value appended at most once appears at most once (duplicate
//     elements); an element that only the reader appends, after the read
//     and not before, was read from the future;
//   - two lists of a key read before their readers' own writes of it are
//     one a prefix of the other (incompatible order otherwise);
//   - at least one appender of each element is in C;
//   - for a read before its reader's own write of the key, among the
//     elements with exactly one appender (counted among committed and
//     unknown transactions) that is in C: an earlier element's appender
//     precedes a later one's in co, and the last such element's appender
//     precedes the appender of any such value missing from the list.
//
// A read after the reader's own write shows the reader's appends on top of
// what it saw, which holds only at atomic levels: the weak levels take no
// order from it.

// listRead is one committed list read.
type listRead struct {
	t        history.TxnID
	op       int
	key      history.KeyID
	list     []history.ValueID
	internal bool
}

// listReads returns the list reads of the committed transactions.
func listReads(h *history.History) []listRead {
	var out []listRead
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		if tx.Status != history.Committed {
			continue
		}
		for i, op := range tx.Ops {
			if op.Kind != history.OpReadList {
				continue
			}
			internal := slices.ContainsFunc(tx.Ops[:i], func(o history.Op) bool { return o.Kind.IsWrite() && o.Key == op.Key })
			out = append(out, listRead{history.TxnID(t), i, op.Key, h.List(op), internal})
		}
	}
	return out
}

// appenders returns the transactions that may have committed and append v
// to k, each once.
func appenders(h *history.History, k history.KeyID, v history.ValueID) []history.TxnID {
	var out []history.TxnID
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Aborted {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && op.Key == k && op.Value == v {
				out = append(out, history.TxnID(t))
				break
			}
		}
	}
	return out
}

// appendCount counts the appends of v to k by transactions that may have
// committed.
func appendCount(h *history.History, k history.KeyID, v history.ValueID) int {
	n := 0
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status == history.Aborted {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && op.Key == k && op.Value == v {
				n++
			}
		}
	}
	return n
}

// listsOK reports whether the lists alone violate nothing a weak level
// forbids.
func listsOK(h *history.History) bool {
	reads := listReads(h)
	for _, r := range reads {
		for i, v := range r.list {
			n := appendCount(h, r.key, v)
			if n == 0 {
				return false // garbage or aborted element
			}
			if n == 1 && slices.Contains(r.list[i+1:], v) {
				return false // duplicate element
			}
			ops := h.Txns[r.t].Ops
			before, after := false, false
			for j, op := range ops {
				if op.Kind.IsWrite() && op.Key == r.key && op.Value == v {
					before = before || j < r.op
					after = after || j > r.op
				}
			}
			if after && !before && n == countIn(ops, r.key, v) {
				return false // future read
			}
		}
	}
	for _, a := range reads {
		for _, b := range reads {
			if a.key == b.key && !a.internal && !b.internal && !prefix(a.list, b.list) && !prefix(b.list, a.list) {
				return false // incompatible order
			}
		}
	}
	return true
}

func countIn(ops []history.Op, k history.KeyID, v history.ValueID) int {
	n := 0
	for _, op := range ops {
		if op.Kind.IsWrite() && op.Key == k && op.Value == v {
			n++
		}
	}
	return n
}

func prefix(a, b []history.ValueID) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// listOrder returns the orders on C (local indices, as successor bitsets)
// that the lists state, and false when some element has no appender in C.
func listOrder(h *history.History, c *cset) ([]uint64, bool) {
	rel := make([]uint64, len(c.txns))
	// unique returns the local index of v's only appender, or -1.
	unique := func(k history.KeyID, v history.ValueID) int {
		if a := appenders(h, k, v); len(a) == 1 && appendCount(h, k, v) == countIn(h.Txns[a[0]].Ops, k, v) {
			return c.local[a[0]]
		}
		return -1
	}
	for _, r := range listReads(h) {
		for _, v := range r.list {
			if !slices.ContainsFunc(appenders(h, r.key, v), func(t history.TxnID) bool { return c.local[t] >= 0 }) {
				return nil, false
			}
		}
		if r.internal {
			continue
		}
		var chain []int
		for _, v := range r.list {
			if u := unique(r.key, v); u >= 0 {
				chain = append(chain, u)
			}
		}
		for i := 1; i < len(chain); i++ {
			if chain[i-1] != chain[i] {
				rel[chain[i-1]] |= 1 << chain[i]
			}
		}
		if len(chain) == 0 {
			continue
		}
		last := chain[len(chain)-1]
		for v := range history.ValueID(len(h.Values[r.key])) {
			if slices.Contains(r.list, v) {
				continue
			}
			if u := unique(r.key, v); u >= 0 && u != last {
				rel[last] |= 1 << u
			}
		}
	}
	return rel, true
}
