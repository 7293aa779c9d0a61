package history

import (
	"fmt"
	"strings"
)

// AnomalyKind is a read-consistency or internal-consistency finding that
// needs no ordering of transactions to establish.
type AnomalyKind uint8

const (
	// ThinAirRead: no transaction ever wrote the value read.
	ThinAirRead AnomalyKind = iota
	// AbortedRead (G1a): only aborted transactions wrote the value.
	AbortedRead
	// IntermediateRead (G1b): the value is only a non-final write of its writer.
	IntermediateRead
	// FutureRead: a transaction read a value that only it writes, later.
	FutureRead
	// NotOwnWrite (INT): after writing a key, a transaction read a value it
	// never wrote to it.
	NotOwnWrite
	// NotLatestOwnWrite (INT): after writing a key twice, a transaction read
	// its own earlier, overwritten value.
	NotLatestOwnWrite
	// NonRepeatableRead (INT): two reads of a key with no write between them
	// returned different values. Read committed allows it; every stronger
	// level forbids it.
	NonRepeatableRead
	// PhantomRead: a non-repeatable read of a row where one of the two
	// reads is a row a predicate read did not return, and the other a
	// point read or a read of the same key range (docs/predicates.md).
	// Read committed and repeatable read allow it.
	PhantomRead
	// PMPRead: a non-repeatable read of a row by two predicate reads over
	// different key ranges, one of which did not return it
	// (predicate-many-preceders).
	PMPRead
)

var anomalyNames = [...]string{
	"thin-air-read", "aborted-read", "intermediate-read", "future-read",
	"not-own-write", "not-latest-own-write", "non-repeatable-read",
	Phantom, PMP,
}

// String returns the stable name used in reports.
func (k AnomalyKind) String() string {
	if int(k) < len(anomalyNames) {
		return anomalyNames[k]
	}
	return fmt.Sprintf("AnomalyKind(%d)", k)
}

// Class returns the Adya/Elle class of the kind, where one exists.
func (k AnomalyKind) Class() string { return mustClass(k.String()).Adya }

// ForbiddenAt reports whether a history with this finding violates level l.
func (k AnomalyKind) ForbiddenAt(l Level) bool { return mustClass(k.String()).ForbiddenAt(l) }

// Finding is one validation result, located precisely.
type Finding struct {
	Kind AnomalyKind
	Txn  TxnID
	// Op is the index of the offending read in the transaction's Ops.
	Op    int32
	Key   KeyID
	Value ValueID
	// Expected is, for INT findings, the value the read should have
	// returned; -1 otherwise.
	Expected ValueID
	// Writers are the transactions that wrote the value in a way that cannot
	// be read: aborted writers (G1a), or writers whose write was not final
	// (G1b); empty for thin-air reads and for aborted writes recorded
	// outside any transaction.
	Writers []TxnID
}

// Describe renders the finding as one line naming transaction, session,
// operation, key and value.
func (f Finding) Describe(h *History) string {
	var b strings.Builder
	place, sel := h.OpAsRead(f.Txn, int(f.Op))
	if sel != nil {
		// A row of a predicate read: the operation as the file has it.
		fmt.Fprintf(&b, "%s: %s op %d, a predicate read of %s, read row %s = %s", f.Kind, h.TxnString(f.Txn), place, sel.Predicate(), h.KeyString(f.Key), h.ValueString(f.Key, f.Value))
	} else {
		fmt.Fprintf(&b, "%s: %s op %d read key %s = %s", f.Kind, h.TxnString(f.Txn), place, h.KeyString(f.Key), h.ValueString(f.Key, f.Value))
	}
	if sel != nil && h.Value(f.Key, f.Value) == EmptyList {
		if h.IsOneOf(f.Key, f.Value) {
			b.WriteString(" (not returned: absent or rejected by the value test)")
		} else {
			b.WriteString(" (not returned: absent)")
		}
	}
	switch f.Kind {
	case ThinAirRead:
		b.WriteString(", a value no transaction wrote")
	case AbortedRead:
		b.WriteString(", written only by aborted transaction(s)")
	case IntermediateRead:
		b.WriteString(", which its writer overwrote before committing")
	case FutureRead:
		b.WriteString(", a value it writes only later itself")
	case NotOwnWrite, NotLatestOwnWrite:
		fmt.Fprintf(&b, ", but its own latest write of the key was %s", h.ValueString(f.Key, f.Expected))
	case NonRepeatableRead:
		fmt.Fprintf(&b, ", but it had read %s before without writing the key", h.ValueString(f.Key, f.Expected))
	case PhantomRead, PMPRead:
		fmt.Fprintf(&b, ", but it had read %s before without writing the key", h.ValueString(f.Key, f.Expected))
		if f.Kind == PMPRead {
			b.WriteString(" in a predicate read over other keys: the two predicate reads saw different transactions before them (predicate-many-preceders)")
		} else {
			b.WriteString(": a phantom, the row appeared or vanished between two reads of the transaction")
		}
	}
	if len(f.Writers) > 0 {
		b.WriteString(" (")
		for i, w := range f.Writers {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(h.TxnString(w))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Validate checks read consistency and internal consistency of every
// committed transaction, in time linear in the size of the history. Reads of
// aborted transactions do not matter; reads of unknown-status transactions
// are left to the checkers, which may decide such a transaction never
// committed.
func (h *History) Validate() []Finding {
	return h.ValidateTxns(func(t TxnID) bool { return h.Txns[t].Status == Committed })
}

// ValidateTxns is Validate for the transactions keep accepts (T⊥ is never
// validated): checkers use it on unknown-status transactions they consider
// committing.
func (h *History) ValidateTxns(keep func(TxnID) bool) []Finding {
	ix := h.Index()
	var out []Finding
	nk := len(h.Keys)
	stamp := make([]int32, nk)
	lastVal := make([]ValueID, nk)  // value of the latest op on the key
	lastOp := make([]int32, nk)     // index of the latest op on the key
	lastWrite := make([]bool, nk)   // whether T wrote the key so far
	writeStamp := make([]int32, nk) // per key: stamp of the op list below
	ownWrites := make([][]ValueID, nk)
	final := newFinalWrites(h)
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		if !keep(TxnID(t)) {
			continue
		}
		s := int32(t)
		for i, op := range tx.Ops {
			k := op.Key
			fit := false
			if stamp[k] != s {
				stamp[k] = s
				lastWrite[k] = false
				if op.Kind.IsRead() {
					if f, bad := h.classifyRead(ix, final, TxnID(t), int32(i), op); bad {
						out = append(out, f)
					}
				}
			} else if op.Kind.IsRead() && op.Value != lastVal[k] && h.fits(k, lastVal[k], op.Value, lastWrite[k]) {
				// Reads with stand-in values (OneOf) that may have observed one
				// version. Under read committed a re-read is a read in its own
				// right, which needs a writer.
				if !lastWrite[k] {
					if g, bad := h.classifyRead(ix, final, TxnID(t), int32(i), op); bad {
						out = append(out, g)
					}
				}
				fit = true
			} else if op.Kind.IsRead() && op.Value != lastVal[k] {
				f := Finding{Txn: TxnID(t), Op: int32(i), Key: k, Value: op.Value, Expected: lastVal[k]}
				switch {
				case !lastWrite[k]:
					f.Kind = h.rereadKind(tx.Ops[lastOp[k]], op)
				case writeStamp[k] == s && containsValue(ownWrites[k], op.Value):
					f.Kind = NotLatestOwnWrite
				default:
					f.Kind = NotOwnWrite
				}
				out = append(out, f)
				// Under read committed a re-read is a read in its own right.
				if !lastWrite[k] {
					if g, bad := h.classifyRead(ix, final, TxnID(t), int32(i), op); bad {
						out = append(out, g)
					}
				}
			}
			if op.Kind.IsWrite() {
				lastWrite[k] = true
				if writeStamp[k] != s {
					writeStamp[k] = s
					ownWrites[k] = ownWrites[k][:0]
				}
				ownWrites[k] = append(ownWrites[k], op.Value)
			}
			// A fitting read replaces the value later reads must fit only
			// when it is narrower.
			if !fit || !lastWrite[k] && subset(h.Members(k, op.Value), h.Members(k, lastVal[k])) {
				lastVal[k], lastOp[k] = op.Value, int32(i)
			}
		}
	}
	h.fillWriters(out)
	return out
}

// fits reports whether a read of cur of key k may observe what the
// transaction's previous operation on k, of last, shows: the same version
// after its own write (last is the write, cur may be a stand-in that
// includes it), else a version both may have observed (Members).
func (h *History) fits(k KeyID, last, cur ValueID, wrote bool) bool {
	if len(h.OneOf) == 0 {
		return false
	}
	if wrote {
		return h.Observes(k, cur, last)
	}
	return len(intersect(h.Members(k, last), h.Members(k, cur))) > 0
}

// subset reports whether every element of a (sorted) is in b (sorted).
func subset(a, b []ValueID) bool { return len(intersect(a, b)) == len(a) }

// rereadKind names a non-repeatable read whose earlier read is prev:
// PhantomRead or PMPRead when one of the two is a row a predicate read did
// not return, NonRepeatableRead otherwise.
func (h *History) rereadKind(prev, op Op) AnomalyKind {
	if !h.Unreturned(prev) && !h.Unreturned(op) {
		return NonRepeatableRead
	}
	a, ok1 := h.SelectOf(prev)
	b, ok2 := h.SelectOf(op)
	if ok1 && ok2 && !a.SamePredicate(b) {
		return PMPRead
	}
	return PhantomRead
}

func containsValue(vs []ValueID, v ValueID) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// classifyRead checks that some other transaction could have written what
// op (a read of t that is not preceded by t's own write) returned.
func (h *History) classifyRead(ix *Index, final *finalWrites, t TxnID, i int32, op Op) (Finding, bool) {
	if ix.hasOtherWriter(final, t, op.Key, op.Value) {
		return Finding{}, false
	}
	f := Finding{Txn: t, Op: i, Key: op.Key, Value: op.Value, Expected: -1}
	for _, later := range h.Txns[t].Ops[i+1:] {
		if later.Kind.IsWrite() && later.Key == op.Key && h.Observes(op.Key, op.Value, later.Value) {
			f.Kind = FutureRead
			return f, true
		}
	}
	if ix.AbortedWriter(op.Key, op.Value) {
		f.Kind = AbortedRead
		return f, true
	}
	if ix.IntermediateWriter(op.Key, op.Value) {
		f.Kind = IntermediateRead
		return f, true
	}
	f.Kind = ThinAirRead
	return f, true
}

// fillWriters names the writers behind G1a and G1b findings in one pass
// over the history, so that many findings stay linear.
func (h *History) fillWriters(fs []Finding) {
	ix := h.Index()
	want := make(map[int32][]int)
	for i, f := range fs {
		if f.Kind == AbortedRead || f.Kind == IntermediateRead {
			ver := ix.Ver(f.Key, f.Value)
			want[ver] = append(want[ver], i)
		}
	}
	if len(want) == 0 {
		return
	}
	for t := range h.Txns {
		tx := &h.Txns[t]
		for j, op := range tx.Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			for _, i := range want[ix.Ver(op.Key, op.Value)] {
				f := &fs[i]
				ok := tx.Status == Aborted
				if f.Kind == IntermediateRead {
					ok = !ok && TxnID(t) != f.Txn && !lastWriteOf(tx.Ops, j)
				}
				if ok && (len(f.Writers) == 0 || f.Writers[len(f.Writers)-1] != TxnID(t)) {
					f.Writers = append(f.Writers, TxnID(t))
				}
			}
		}
	}
}

// lastWriteOf reports whether ops[j] is the last write of its key in ops.
func lastWriteOf(ops []Op, j int) bool {
	for _, op := range ops[j+1:] {
		if op.Kind.IsWrite() && op.Key == ops[j].Key {
			return false
		}
	}
	return true
}
