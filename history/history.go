// Package history owns hyperiso's model of a recorded database history:
// sessions of ordered transactions, each an ordered list of operations, with
// keys and values interned to dense integers so that every later stage indexes
// arrays instead of maps. It also owns read-consistency validation and the
// statistics every checker reports. Readers build a History through a Builder.
package history

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// TxnID indexes History.Txns. Transaction 0 is always the initial transaction
// T⊥, which writes every key's initial value and precedes all others.
type TxnID int32

// KeyID indexes History.Keys.
type KeyID int32

// ValueID indexes History.Values[key]: values are interned per key, so a
// (KeyID, ValueID) pair names one version and per-key tables are dense arrays.
type ValueID int32

// InitTxn is the TxnID of the initial transaction.
const InitTxn TxnID = 0

// OpKind is the kind of one operation.
type OpKind uint8

const (
	// OpRead reads a register and returns one value.
	OpRead OpKind = iota
	// OpWrite writes one value to a register.
	OpWrite
	// OpAppend appends one element to a list (list-append workloads); for
	// version purposes it installs the element as the key's new version.
	OpAppend
	// OpReadList reads a whole list; Value is its last element (or the key's
	// initial value when the list is empty) and the full list is in History.Lists.
	OpReadList
)

var opKindNames = [...]string{"r", "w", "append", "r-list"}

func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// IsRead reports whether the operation observes a value.
func (k OpKind) IsRead() bool { return k == OpRead || k == OpReadList }

// IsWrite reports whether the operation installs a value.
func (k OpKind) IsWrite() bool { return k == OpWrite || k == OpAppend }

// Op is one operation, 16 bytes, stored contiguously per transaction.
type Op struct {
	Kind OpKind
	// Src says what the operation stands for when it is a row's (an
	// insert, a delete, a row of a predicate read); SrcPlain otherwise.
	// It sits in the padding after Kind, so Op stays 16 bytes.
	Src   OpSrc
	Key   KeyID
	Value ValueID
	// List is, for OpReadList, 1 + the index of the observed list in
	// History.Lists; for an OpRead with Src SrcSelect, 1 + the index of
	// its predicate read in History.Selects; 0 otherwise.
	List int32
}

// OpSrc is an operation's provenance: the row operation (docs/predicates.md)
// that a register operation of the model stands for. Checks decide by Kind,
// Key and Value alone; Src lets writers write the operation back as it was
// read, and lets a check refuse what it does not decide.
type OpSrc uint8

const (
	// SrcPlain: the operation is what its Kind says.
	SrcPlain OpSrc = iota
	// SrcInsert: an OpWrite that is insert(k, v), a blind write of v.
	SrcInsert
	// SrcDelete: an OpWrite that is delete(k), a blind write of the empty
	// value (EmptyList), the value an absent row reads as.
	SrcDelete
	// SrcSelect: an OpRead that is one row of a predicate read (Op.List
	// names it): the version of the row that the read observed, the
	// returned value or, for a row it did not return, EmptyList.
	SrcSelect
)

var opSrcNames = [...]string{"", "insert", "delete", "select"}

func (s OpSrc) String() string {
	if int(s) < len(opSrcNames) {
		return opSrcNames[s]
	}
	return fmt.Sprintf("OpSrc(%d)", s)
}

// Select is one predicate read over a key range: select(keys in [Lo, Hi))
// returned some rows. It observes every row of its universe: the integer
// keys of the history in [Lo, Hi) (a key no other operation names is
// absent in every version and would constrain nothing). Its transaction's
// Ops[At:At+N] are one OpRead per such key (Src SrcSelect, List 1 + the
// Select's index), in key order, at the read's place in program order: a
// returned row (k, v) reads v, a row not returned reads EmptyList. From
// read atomic up a transaction's reads all see one visible set, so these
// point reads are exactly what the predicate read means; at read committed
// its rows are not ordered among themselves and the expansion would order
// them (checks refuse it there).
//
// Two kinds of rows not returned are not stored, as they constrain
// nothing: every such row of an aborted transaction's read (no check reads
// what an aborted transaction observed), and a row whose key is absent in
// every version (T⊥ writes it the empty value, no transaction that may
// commit writes it). Ops[At:At+N] then holds the other rows, still in key
// order; the range (Lo, Hi), not N, says which keys the read covers.
//
// Memory: N is at most the number of keys of the history in the range, so
// a history costs at most (predicate reads × keys per range) operations:
// the rows not returned are not compressed into runs.
type Select struct {
	Txn    TxnID
	Lo, Hi int64
	At, N  int32
	// Test is the predicate's value test, nil for none (any value). A row
	// a read with a test did not return reads a stand-in value (OneOf).
	Test *ValueTest
}

// Ops returns the row reads of s in h.
func (s Select) Ops(h *History) []Op {
	return h.Txns[s.Txn].Ops[s.At : s.At+s.N]
}

// SelectOf returns the predicate read op belongs to, if any.
func (h *History) SelectOf(op Op) (Select, bool) {
	if op.Src != SrcSelect || op.Kind != OpRead || op.List < 1 || int(op.List) > len(h.Selects) {
		return Select{}, false
	}
	return h.Selects[op.List-1], true
}

// SelectsOf returns t's predicate reads, in program order.
func (h *History) SelectsOf(t TxnID) []Select {
	lo, _ := slices.BinarySearchFunc(h.Selects, t, func(s Select, t TxnID) int { return cmp.Compare(s.Txn, t) })
	hi := lo
	for hi < len(h.Selects) && h.Selects[hi].Txn == t {
		hi++
	}
	return h.Selects[lo:hi]
}

// OpAsRead returns the place of t's operation j in the transaction as it
// was read, where a predicate read is one operation however many rows it
// expanded to, and the predicate read the operation is a row of, if any.
func (h *History) OpAsRead(t TxnID, j int) (int, *Select) {
	place := j
	for i := range h.SelectsOf(t) {
		s := &h.SelectsOf(t)[i]
		switch {
		case j >= int(s.At+s.N):
			place -= int(s.N) - 1
		case j >= int(s.At):
			return int(s.At) + place - j, s
		}
	}
	return place, nil
}

// ReadPoint returns the program point of t's operation j for the order
// of its reads at read committed: the place (At) of the predicate read it
// is a row of, else j. The rows of one predicate read share one point, so
// none of them precedes another (docs/predicates.md, "For the checker").
func (h *History) ReadPoint(t TxnID, j int32) int32 {
	if len(h.Selects) == 0 {
		return j
	}
	if op := h.Txns[t].Ops[j]; op.Src == SrcSelect && op.List >= 1 && int(op.List) <= len(h.Selects) {
		return h.Selects[op.List-1].At
	}
	return j
}

// Unreturned reports whether op is a row that its predicate read did not
// return: an observation whose anti-dependencies are predicate ones
// (docs/predicates.md), which repeatable read lets point backwards.
func (h *History) Unreturned(op Op) bool {
	return op.Src == SrcSelect && op.Kind == OpRead && h.Values[op.Key][op.Value] == EmptyList
}

// HasRows reports whether h has predicate reads, inserts or deletes:
// operations whose provenance (Op.Src) a format or a check must keep or
// refuse.
func (h *History) HasRows() bool {
	if len(h.Selects) > 0 {
		return true
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Src != SrcPlain {
				return true
			}
		}
	}
	return false
}

// Status is the outcome of a transaction as the client saw it.
type Status uint8

const (
	// Committed: the client saw the commit succeed.
	Committed Status = iota
	// Aborted: the transaction is known not to have committed.
	Aborted
	// Unknown: the outcome is not known (Elle :info, unterminated transaction).
	Unknown
)

var statusNames = [...]string{"committed", "aborted", "unknown"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", s)
}

// ParseStatus is the inverse of Status.String.
func ParseStatus(s string) (Status, bool) {
	for i, n := range statusNames {
		if n == s {
			return Status(i), true
		}
	}
	return 0, false
}

// Pos locates something in an input file: a 1-based line for text formats or
// a byte offset for binary ones (Line == 0). Offset -1 with Line 0 names the
// file (or directory) as a whole.
type Pos struct {
	File   string
	Line   int
	Offset int64
}

func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0 && p.Offset == 0:
		return "?"
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	case p.Offset < 0:
		return p.File
	default:
		return fmt.Sprintf("%s: byte %d", p.File, p.Offset)
	}
}

// Txn is one transaction.
type Txn struct {
	// ID is the format-native id (or one assigned by the reader).
	ID int64
	// Session indexes History.Sessions; -1 for the initial transaction.
	Session int32
	// Index is the position within the session.
	Index  int32
	Status Status
	// Level is the transaction's declared isolation level, if any.
	Level Level
	// Ops are in program order.
	Ops []Op
	// Pos is where the transaction starts in its file.
	Pos Pos
	// Start and End bound the transaction in real time (Jepsen :index or
	// :time of its invocation and completion) when Timed is set.
	Start, End int64
	Timed      bool
}

// Session is one client session: its transactions in session order.
type Session struct {
	ID   int64
	Txns []TxnID
}

// InitKind says where the initial transaction came from.
type InitKind uint8

const (
	// InitNone: the format has no initial state; T⊥ writes nothing.
	InitNone InitKind = iota
	// InitImplicit: synthesised by the reader from the format's convention.
	InitImplicit
	// InitExplicit: found in the file and moved out of its session.
	InitExplicit
)

var initKindNames = [...]string{"none", "implicit", "explicit"}

func (k InitKind) String() string {
	if int(k) < len(initKindNames) {
		return initKindNames[k]
	}
	return fmt.Sprintf("InitKind(%d)", k)
}

// Warning is a non-fatal finding of a reader.
type Warning struct {
	Pos Pos
	Msg string
}

func (w Warning) String() string { return w.Pos.String() + ": " + w.Msg }

// Version is a (key, value) pair.
type Version struct {
	Key   KeyID
	Value ValueID
}

// VersionHint says that on Key, version Before was installed before After.
type VersionHint struct {
	Key           KeyID
	Before, After ValueID
}

// History is an immutable, interned history. Txns[0] is the initial
// transaction T⊥.
type History struct {
	// Source names the input (a file or directory path).
	Source string
	// Format names the reader that produced it.
	Format   string
	Sessions []Session
	Txns     []Txn
	InitKind InitKind
	// Keys maps KeyID to the key as it appears in the input.
	Keys []int64
	// Values maps (KeyID, ValueID) to the value as it appears in the input.
	Values [][]int64
	// KeyNames, when non-nil, holds the original name of each key read as
	// a name rather than an integer (a JSONL string, an EDN keyword,
	// string or vector); "" for an integer key. Such a key's entry in Keys
	// is a stand-in the Builder chose, distinct from every integer key.
	KeyNames []string
	// ValueNames, when non-nil, holds per key (nil for a key whose values
	// are all integers) the original name of each value read as a name,
	// "" for an integer value; the entry in Values is a stand-in distinct
	// from the key's integer values and from EmptyList.
	ValueNames [][]string
	// Lists holds the lists observed by OpReadList operations.
	Lists [][]ValueID
	// Selects are the predicate reads, ordered by transaction and place
	// in program order (Select).
	Selects []Select
	// OneOf maps the stand-in values of rows that a predicate read with a
	// value test did not return to the versions such a read may have
	// observed (sorted): the row's absent versions and its values the test
	// rejects (valuetest.go). A stand-in's Values entry is EmptyList; no
	// transaction writes one.
	OneOf map[Version][]ValueID
	// AbortedWrites are writes known not to have taken effect that belong
	// to no transaction of the history.
	AbortedWrites []Version
	// VersionHints are version orders stated outright. A list history's
	// own orders are in the VersionHints of its register views
	// (ListExplanations).
	VersionHints []VersionHint
	// NoConflictHints are version orders that hold only at levels whose
	// writers of one key see each other (LevelRow.NoConflict): a list
	// read's reader that appends to the key installs its block right
	// after its view. HintsAt adds them at those levels; reports do not
	// count them among the orders the history states at every level.
	NoConflictHints []VersionHint
	Warnings        []Warning
	Meta            map[string]string

	// Dropped counts what lenient reading skipped of the input.
	Dropped Dropped

	index lazyIndex
}

// NumKeys returns the number of distinct keys.
func (h *History) NumKeys() int { return len(h.Keys) }

// Key returns the input key of k.
func (h *History) Key(k KeyID) int64 { return h.Keys[k] }

// Value returns the input value of version (k, v).
func (h *History) Value(k KeyID, v ValueID) int64 { return h.Values[k][v] }

// KeyString renders a key for messages, using its symbolic name if any.
func (h *History) KeyString(k KeyID) string {
	if name := h.KeyName(k); name != "" {
		return name
	}
	return fmt.Sprint(h.Keys[k])
}

// KeyName returns the name key k was read as, or "" for an integer key.
func (h *History) KeyName(k KeyID) string {
	if int(k) < len(h.KeyNames) {
		return h.KeyNames[k]
	}
	return ""
}

// ValueName returns the name version (k, v) was read as, or "" for an
// integer value.
func (h *History) ValueName(k KeyID, v ValueID) string {
	if int(k) < len(h.ValueNames) && int(v) < len(h.ValueNames[k]) {
		return h.ValueNames[k][v]
	}
	return ""
}

// ValueString renders a value for messages: its name if it was read as
// one, "nil" for EmptyList, else the integer.
func (h *History) ValueString(k KeyID, v ValueID) string {
	if name := h.ValueName(k, v); name != "" {
		return name
	}
	if raw := h.Values[k][v]; raw != EmptyList {
		return fmt.Sprint(raw)
	}
	if m, ok := h.OneOf[Version{k, v}]; ok {
		// A row a value test did not return: say which versions it may be.
		parts := make([]string, len(m))
		for i, x := range m {
			parts[i] = h.ValueString(k, x)
		}
		return "one of " + strings.Join(parts, "|")
	}
	return "nil"
}

// HasNames reports whether some key or value was read as a name.
func (h *History) HasNames() bool {
	for _, n := range h.KeyNames {
		if n != "" {
			return true
		}
	}
	for _, names := range h.ValueNames {
		for _, n := range names {
			if n != "" {
				return true
			}
		}
	}
	return false
}

// TxnString renders a transaction for messages: "T<id>" plus its session.
func (h *History) TxnString(t TxnID) string {
	if t == InitTxn {
		return "T⊥"
	}
	tx := &h.Txns[t]
	return fmt.Sprintf("T%d(s%d#%d)", tx.ID, h.Sessions[tx.Session].ID, tx.Index)
}

// SessionOf returns the session ID of t, or -1 for T⊥.
func (h *History) SessionOf(t TxnID) int64 {
	if h.Txns[t].Session < 0 {
		return -1
	}
	return h.Sessions[h.Txns[t].Session].ID
}

// List returns the list observed by a list read.
func (h *History) List(op Op) []ValueID {
	if op.List == 0 || op.Kind != OpReadList {
		return nil
	}
	return h.Lists[op.List-1]
}

// EmptyList is the value that stands for an empty list (and a nil register
// read) in list-append histories, as in docs/formats.md.
const EmptyList int64 = 0x7ff7f7f7f7f7f7f7
