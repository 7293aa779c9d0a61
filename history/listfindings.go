package history

import (
	"fmt"
	"strings"
)

// The anomalies list reads show on their own, and how reports word them.

// ListFindingKind is an anomaly that the list reads of a list-append
// history show without any ordering of transactions.
type ListFindingKind uint8

const (
	// IncompatibleOrder: no single version order of the key explains the
	// list: two views of one key, neither a prefix of the other, or a
	// view that holds a transaction's appends split, out of order or
	// without their beginning.
	IncompatibleOrder ListFindingKind = iota
	// DuplicateElements: a list holds a value more often than it was
	// appended (Elle's duplicate-elements).
	DuplicateElements
	// GarbageElement: a list element that no transaction appended.
	GarbageElement
	// AbortedElement: a list element that only aborted transactions
	// appended (G1a).
	AbortedElement
	// FutureElement: a list element that only its reader appends, after
	// the read.
	FutureElement
	// InternalList: a list read disagrees with its own transaction: it does
	// not end with the reader's earlier appends to the key in order, or
	// it shows less than an earlier read of the same key in the same
	// transaction (Elle's internal).
	InternalList
	// IntermediateList: a view ends inside a transaction's appends (G1b).
	IntermediateList
	// NonRepeatableList: two reads of a key in one transaction show
	// different views, the later one longer; read committed allows it.
	NonRepeatableList
	// UnexplainedList: no arrangement of whole appends, one per appender,
	// spells the view (values appended more than once).
	UnexplainedList
)

var listFindingNames = [...]string{"incompatible-order", "duplicate-elements", "garbage-read", "aborted-read",
	"future-read", "internal", "intermediate-read", "non-repeatable-read", "incompatible-order"}

// String returns the stable name used in reports (Elle's where it has one).
func (k ListFindingKind) String() string {
	if int(k) < len(listFindingNames) {
		return listFindingNames[k]
	}
	return fmt.Sprintf("ListFindingKind(%d)", k)
}

// Class returns the Adya/Elle class of the kind, where one exists.
func (k ListFindingKind) Class() string { return mustClass(k.String()).Adya }

// ListFinding is one anomaly the list reads show.
type ListFinding struct {
	Kind ListFindingKind
	Key  KeyID
	// Txns are the readers: for IncompatibleOrder between two reads the one
	// whose list was the longest, then the other; otherwise the one reader.
	Txns []TxnID
	// Ops index the list reads in their transactions' Ops, parallel to Txns.
	Ops []int32
	// Value is the offending element; -1 when there is none.
	Value ValueID
	// At is the position (from 0) of the offending element in the list, or
	// where two lists differ.
	At int
	// Writers are the other transactions involved: the aborted appenders
	// of an AbortedElement, the appender whose block an IncompatibleOrder
	// or IntermediateList breaks.
	Writers []TxnID
}

// ForbiddenAt reports whether a history with this finding violates level l.
func (f ListFinding) ForbiddenAt(l Level) bool { return mustClass(f.Kind.String()).ForbiddenAt(l) }

// Describe renders the finding as one line.
func (f ListFinding) Describe(h *History) string {
	var b strings.Builder
	r := f.Txns[len(f.Txns)-1]
	list := listOf(h, r, f.Ops[len(f.Ops)-1])
	key := h.KeyString(f.Key)
	writer := ""
	if len(f.Writers) > 0 {
		writer = h.TxnString(f.Writers[0])
	}
	switch f.Kind {
	case IncompatibleOrder:
		if len(f.Txns) == 2 {
			r0 := f.Txns[0]
			fmt.Fprintf(&b, "incompatible-order on key %s: %s read %s and %s read %s; neither is a prefix of the other (they differ at position %d), so no single order of the appends explains both",
				key, h.TxnString(r0), renderList(h, f.Key, listOf(h, r0, f.Ops[0]), f.At),
				h.TxnString(r), renderList(h, f.Key, list, f.At), f.At)
		} else {
			fmt.Fprintf(&b, "incompatible-order on key %s: %s read %s, which holds %s's appends %s split, out of order or without their beginning (position %d); a transaction installs its appends together and in order",
				key, h.TxnString(r), renderList(h, f.Key, list, f.At), writer, renderList(h, f.Key, blockOf(h, f.Writers[0], f.Key), -1), f.At)
		}
	case UnexplainedList:
		fmt.Fprintf(&b, "incompatible-order on key %s: %s read %s, and no arrangement of whole appends, each transaction's once and in order, spells it",
			key, h.TxnString(r), renderList(h, f.Key, list, -1))
	case DuplicateElements:
		fmt.Fprintf(&b, "duplicate-elements: %s read key %s = %s, which holds %s more often than it was appended",
			h.TxnString(r), key, renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
	case GarbageElement:
		fmt.Fprintf(&b, "garbage-read: %s read key %s = %s, whose element %s no transaction appended",
			h.TxnString(r), key, renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
	case FutureElement:
		fmt.Fprintf(&b, "future-read: %s read key %s = %s, whose element %s (position %d) only it appends, later",
			h.TxnString(r), key, renderList(h, f.Key, list, f.At), h.ValueString(f.Key, f.Value), f.At)
	case AbortedElement:
		fmt.Fprintf(&b, "aborted-read (G1a): %s read key %s = %s, whose element %s only aborted transactions appended",
			h.TxnString(r), key, renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
		writeTxns(&b, h, f.Writers)
	case InternalList:
		if len(f.Txns) == 2 {
			fmt.Fprintf(&b, "internal: %s read key %s = %s after it had read %s, without appending in between: a later read of a transaction never shows less",
				h.TxnString(r), key, renderList(h, f.Key, list, -1), renderList(h, f.Key, listOf(h, r, f.Ops[0]), -1))
		} else {
			fmt.Fprintf(&b, "internal: %s read key %s = %s, which does not end with its own earlier appends %s in order",
				h.TxnString(r), key, renderList(h, f.Key, list, -1), renderList(h, f.Key, ownBefore(h, r, f.Ops[0]), -1))
		}
	case IntermediateList:
		fmt.Fprintf(&b, "intermediate-read (G1b): %s read key %s = %s, which ends inside %s's appends %s: a state no commit installed",
			h.TxnString(r), key, renderList(h, f.Key, list, -1), writer, renderList(h, f.Key, blockOf(h, f.Writers[0], f.Key), -1))
	case NonRepeatableList:
		fmt.Fprintf(&b, "non-repeatable-read: %s read key %s = %s and later %s without appending in between",
			h.TxnString(r), key, renderList(h, f.Key, listOf(h, r, f.Ops[0]), -1), renderList(h, f.Key, list, -1))
	default:
		b.WriteString(f.Kind.String())
	}
	return b.String()
}

func writeTxns(b *strings.Builder, h *History, ts []TxnID) {
	for i, w := range ts {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(h.TxnString(w))
		if i == len(ts)-1 {
			b.WriteString(")")
		}
	}
}

func listOf(h *History, t TxnID, op int32) []ValueID {
	o := h.Txns[t].Ops[op]
	if o.Kind == OpRead {
		return nil // a register read of the empty value on a list key
	}
	return h.List(o)
}

// blockOf returns t's appends to k in program order.
func blockOf(h *History, t TxnID, k KeyID) []ValueID {
	var out []ValueID
	for _, op := range h.Txns[t].Ops {
		if op.Kind == OpAppend && op.Key == k {
			out = append(out, op.Value)
		}
	}
	return out
}

// ownBefore returns t's appends to the key of op before it.
func ownBefore(h *History, t TxnID, op int32) []ValueID {
	k := h.Txns[t].Ops[op].Key
	var out []ValueID
	for _, o := range h.Txns[t].Ops[:op] {
		if o.Kind == OpAppend && o.Key == k {
			out = append(out, o.Value)
		}
	}
	return out
}

// renderList prints a list, shortened around position at (or its start and
// end when at < 0) if it is long.
func renderList(h *History, k KeyID, l []ValueID, at int) string {
	const keep = 4
	var b strings.Builder
	b.WriteByte('[')
	lo, hi := 0, len(l)
	if len(l) > 3*keep {
		if at < 0 {
			at = len(l) - 1
		}
		lo, hi = max(0, at-keep), min(len(l), at+keep)
	}
	if lo > 0 {
		b.WriteString("… ")
	}
	for i := lo; i < hi; i++ {
		if i > lo {
			b.WriteByte(' ')
		}
		b.WriteString(h.ValueString(k, l[i]))
	}
	if hi < len(l) {
		b.WriteString(" …")
	}
	b.WriteByte(']')
	return b.String()
}
