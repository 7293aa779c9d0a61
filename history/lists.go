package history

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
)

// This file is what list-append histories mean, for every reader and every
// level (DESIGN §3, Lists). It is the only place that knows it: the
// checkers see a list history through its register view, one per way of
// explaining its lists (ListExplanations).
//
// The semantics. Every committed transaction W that appends to key k
// installs one version of k: the latest version followed by W's appends to
// k in program order (W's block). There is one total version order per key
// and each version is a prefix of the next, so every version is a
// concatenation of whole blocks. A read of k by T returns one version,
// followed by T's own earlier appends to k in program order (the own
// suffix); the version part is the read's view. T read from every
// transaction whose block its view holds, and saw none of the appenders
// whose block it lacks.
//
// The register view of one explanation (which unknown transactions
// committed, and which appender wrote each element where values repeat)
// says exactly that, with register facts every engine already takes:
//   - every committed appender W writes k once, at its end: a version
//     unique to W (a repeated value gets a fresh stand-in);
//   - a list read becomes, in place, a read of k that returns the version
//     of the last block of its view (T⊥'s empty list when the view is
//     empty): it is external even after T's own appends, which move to
//     T's end;
//   - the blocks of the longest view of each key are ordered as they
//     appear, and every other committed appender of the key follows them:
//     stated version orders (VersionHints);
//   - with ListOptions.Visibility, for each earlier block's appender W the
//     reader also reads a stand-in key that only W writes: W is visible to
//     it, which levels below prefix consistency do not infer from the
//     version order.

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

// HasLists reports whether h appends to or reads a list.
func (h *History) HasLists() bool {
	if len(h.Lists) > 0 {
		return true
	}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpAppend {
				return true
			}
		}
	}
	return false
}

// HintsAt returns the version orders stated outright (VersionHints). A
// list history's orders are in its register views' VersionHints
// (ListExplanations); the level is kept for the callers that ask per level.
func (h *History) HintsAt(Level) []VersionHint { return h.VersionHints }

// ListOptions tune ListExplanations.
type ListOptions struct {
	// Visibility says for which blocks of a view but the last the reader
	// also reads a stand-in key only that block's appender writes (see
	// the file comment).
	Visibility Visibility
	// MaxExplanations bounds how many explanations are produced; 0 means
	// DefaultMaxExplanations.
	MaxExplanations int
}

// Visibility says which earlier blocks of a view a register view states the
// reader saw.
type Visibility uint8

const (
	// VisibleNone: none; levels whose reads see a prefix of the version
	// order (PC, SI, SER) infer it from the version order.
	VisibleNone Visibility = iota
	// VisibleReadKeys: those whose appender writes another key the
	// reader reads; without transitive visibility (RA, RC) seeing an
	// appender matters only through the keys both touch, and on the
	// list's own key the version order says it already.
	VisibleReadKeys
	// VisibleCovered: every one that no later block of the view covers,
	// where a block covers those its appender's own view of the key held
	// and the earlier transactions of its session (transitive visibility,
	// CC and PSI: what the appender saw, the reader sees too, and session
	// order and the appender's own reads say it saw them).
	VisibleCovered
	// VisibleAll: every one (mixed levels, where transitivity depends on
	// each transaction's level).
	VisibleAll
)

// DefaultMaxExplanations is the default of ListOptions.MaxExplanations.
const DefaultMaxExplanations = 4096

// ErrTooManyExplanations is returned (wrapped) when a history's lists have
// more explanations than ListOptions.MaxExplanations allows.
var ErrTooManyExplanations = errors.New("too many ways to explain the list reads")

// ListExplanation is one way to explain a list history's lists.
type ListExplanation struct {
	// H is the register view, or nil when Findings already rule this
	// explanation out at some level.
	H *History
	// Findings are the anomalies of this explanation, on the original
	// history (ListFinding.ForbiddenAt says at which levels).
	Findings []ListFinding
	// Committed and Aborted are the unknown-status transactions this
	// explanation takes as committed and as not committed; the others
	// keep their status (they append to no list and read none).
	Committed, Aborted []TxnID
	// OpOrigin maps, per transaction, each operation of H to the index of
	// the operation of the original history it stands for (-1 for a
	// stand-in read).
	OpOrigin [][]int32
	// Views name, for each list read that holds a value appended by
	// several transactions, the appenders of its view's blocks in order:
	// which transaction this explanation says wrote each element.
	Views []ListView
}

// ListView is the explanation of one list read: the transactions whose
// blocks its view holds, in order.
type ListView struct {
	Txn       TxnID
	Op        int32
	Appenders []TxnID
}

// ListExplanations yields every explanation of h's lists (one for a
// history whose appended values are unique: which unknown transactions
// committed is then determined), each with its register view. An
// explanation is a choice of fates for the unknown transactions whose
// fate the lists leave open and of an appender for every element; none is
// skipped. It yields an error wrapping ErrTooManyExplanations once opt's
// bound is reached, and an error for a history that uses a key both as a
// list and as a register.
func (h *History) ListExplanations(opt ListOptions) iter.Seq2[*ListExplanation, error] {
	return func(yield func(*ListExplanation, error) bool) {
		p, err := newListPrep(h)
		if err != nil {
			yield(nil, err)
			return
		}
		limit := opt.MaxExplanations
		if limit <= 0 {
			limit = DefaultMaxExplanations
		}
		nv := p.base[len(h.Keys)]
		e := &listEnum{p: p, opt: opt, limit: limit, yield: yield, mark: make([]int32, nv), occurs: make([]int32, nv)}
		fate := make([]Status, len(h.Txns))
		for t := range h.Txns {
			fate[t] = h.Txns[t].Status
			if fate[t] == Unknown && p.relevant[t] {
				fate[t] = undetermined
			}
		}
		e.fates(fate, nil)
		if e.over && !e.stopped {
			yield(nil, fmt.Errorf("%w: more than %d", ErrTooManyExplanations, limit))
		}
	}
}

// undetermined marks, in a fate table, an unknown-status transaction
// whose fate is still open.
const undetermined Status = 255

// listRead is one list read of a non-aborted transaction.
type listRead struct {
	t   TxnID
	op  int32
	key KeyID
	// view is the list without the own suffix; nil with bad set when the
	// list does not end with the reader's own earlier appends.
	view []ValueID
	bad  bool
}

// listPrep is what every explanation shares.
type listPrep struct {
	h      *History
	isList []bool
	// blocks[t] lists t's blocks (non-aborted t), one per list key.
	blocks [][]txnBlock
	reads  []listRead
	// readsOf[t] indexes t's list reads in reads.
	readsOf [][]int32
	// appenders[ver] are the non-aborted transactions whose block holds
	// version ver, ascending, each once.
	base      []int32
	appenders [][]TxnID
	aborted   []bool // per version: appended by an aborted transaction
	// relevant marks the unknown transactions that append to or read a
	// list; needed those whose register writes some other transaction reads.
	relevant, needed []bool
	// writeKeys[t] are the keys t writes or appends to, each once.
	writeKeys [][]KeyID
	empty     []ValueID // per list key: the empty list's value, or -1
}

type txnBlock struct {
	key  KeyID
	vals []ValueID
}

func newListPrep(h *History) (*listPrep, error) {
	nk := len(h.Keys)
	p := &listPrep{h: h, isList: make([]bool, nk), blocks: make([][]txnBlock, len(h.Txns)),
		readsOf: make([][]int32, len(h.Txns)), relevant: make([]bool, len(h.Txns)), needed: make([]bool, len(h.Txns))}
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpAppend || op.Kind == OpReadList {
				p.isList[op.Key] = true
			}
		}
	}
	p.empty = make([]ValueID, nk)
	for k := range nk {
		p.empty[k] = -1
		if p.isList[k] {
			for v, raw := range h.Values[k] {
				if raw == EmptyList {
					p.empty[k] = ValueID(v)
				}
			}
		}
	}
	// Versions numbered as Index.VerBase does, without building the
	// index of a history the engines never see.
	p.base = make([]int32, nk+1)
	for k := range nk {
		p.base[k+1] = p.base[k] + int32(len(h.Values[k]))
	}
	nv := p.base[nk]
	p.appenders = make([][]TxnID, nv)
	p.aborted = make([]bool, nv)
	for _, w := range h.AbortedWrites {
		p.aborted[p.base[w.Key]+int32(w.Value)] = true
	}
	regRead := map[int64]bool{} // raw (key id, value id) of register reads
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for i, op := range tx.Ops {
			k := op.Key
			if !p.isList[k] {
				if op.Kind == OpRead && tx.Status != Aborted {
					regRead[int64(k)<<32|int64(op.Value)] = true
				}
				continue
			}
			switch op.Kind {
			case OpWrite:
				return nil, fmt.Errorf("%s: %s writes key %s as a register, but the key is a list (appended to or read as a list)", tx.Pos, h.TxnString(TxnID(t)), h.KeyString(k))
			case OpRead:
				if h.Values[k][op.Value] != EmptyList {
					return nil, fmt.Errorf("%s: %s reads key %s as a register (value %s), but the key is a list (appended to or read as a list)", tx.Pos, h.TxnString(TxnID(t)), h.KeyString(k), h.ValueString(k, op.Value))
				}
			}
			if tx.Status == Aborted {
				if op.Kind == OpAppend {
					p.aborted[p.base[k]+int32(op.Value)] = true
				}
				continue
			}
			if tx.Status == Unknown {
				p.relevant[t] = true
			}
			switch op.Kind {
			case OpAppend:
				bs := p.blocks[t]
				j := slices.IndexFunc(bs, func(b txnBlock) bool { return b.key == k })
				if j < 0 {
					bs = append(bs, txnBlock{key: k})
					j = len(bs) - 1
				}
				bs[j].vals = append(bs[j].vals, op.Value)
				p.blocks[t] = bs
				ver := p.base[k] + int32(op.Value)
				if a := p.appenders[ver]; len(a) == 0 || a[len(a)-1] != TxnID(t) {
					p.appenders[ver] = append(a, TxnID(t))
				}
			case OpRead, OpReadList:
				r := listRead{t: TxnID(t), op: int32(i), key: k}
				var l []ValueID
				if op.Kind == OpReadList {
					l = h.List(op)
				}
				own := p.block(TxnID(t), k)
				if n := len(l) - len(own); n >= 0 && slices.Equal(l[n:], own) {
					r.view = l[:n]
				} else {
					r.bad = true
				}
				p.readsOf[t] = append(p.readsOf[t], int32(len(p.reads)))
				p.reads = append(p.reads, r)
			}
		}
	}
	p.writeKeys = make([][]KeyID, len(h.Txns))
	for t := 1; t < len(h.Txns); t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsWrite() && !slices.Contains(p.writeKeys[t], op.Key) {
				p.writeKeys[t] = append(p.writeKeys[t], op.Key)
			}
		}
		if h.Txns[t].Status != Unknown {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind == OpWrite && !p.isList[op.Key] && regRead[int64(op.Key)<<32|int64(op.Value)] {
				p.needed[t] = true
			}
		}
	}
	return p, nil
}

// writesReadKey reports whether w writes a key other than k that the
// transaction stamped t in readKey reads.
func (p *listPrep) writesReadKey(w TxnID, k KeyID, readKey []int32, t int32) bool {
	for _, x := range p.writeKeys[w] {
		if x != k && readKey[x] == t {
			return true
		}
	}
	return false
}

// block returns t's block on k so far (all of it once preparation is
// done).
func (p *listPrep) block(t TxnID, k KeyID) []ValueID {
	for _, b := range p.blocks[t] {
		if b.key == k {
			return b.vals
		}
	}
	return nil
}

func (p *listPrep) cands(k KeyID, v ValueID) []TxnID { return p.appenders[p.base[k]+int32(v)] }

// listEnum enumerates explanations.
type listEnum struct {
	p *listPrep
	// mark, occurs and stamp count, per version, an element's occurrences
	// in the view being checked.
	mark, occurs []int32
	stamp        int32
	opt          ListOptions
	limit        int
	count        int
	over         bool
	stopped      bool
	yield        func(*ListExplanation, error) bool
}

func (e *listEnum) done() bool { return e.over || e.stopped }

// fates settles the fates the lists force, then branches on one that is
// still open, or goes on to the appenders.
//
// taken lists the transactions committed by a branch rather than forced:
// an explanation in which such a transaction's block appears in no view
// and whose writes nobody reads is skipped, since the branch that leaves
// it out explains the same with fewer constraints.
func (e *listEnum) fates(fate []Status, taken []TxnID) {
	if e.done() {
		return
	}
	p := e.p
	open := false
	for _, f := range fate {
		if f == undetermined {
			open = true
			break
		}
	}
	if !open {
		e.views(fate, taken)
		return
	}
	fate = slices.Clone(fate)
	in := func(t TxnID) bool { return fate[t] == Committed }
	// Force the only possible appender of an element a committed reader
	// saw; a forced transaction's own reads count from then on.
	for changed := true; changed; {
		changed = false
		for _, r := range p.reads {
			if !in(r.t) || r.bad {
				continue
			}
			for _, v := range r.view {
				var only TxnID = -1
				n := 0
				for _, w := range p.cands(r.key, v) {
					if w != r.t && fate[w] != Aborted {
						only = w
						n++
					}
				}
				if n == 1 && fate[only] == undetermined {
					fate[only] = Committed
					changed = true
				}
			}
		}
	}
	branch := TxnID(-1)
	for _, r := range p.reads {
		if branch >= 0 {
			break
		}
		if !in(r.t) || r.bad {
			continue
		}
		for _, v := range r.view {
			for _, w := range p.cands(r.key, v) {
				if w != r.t && fate[w] == undetermined {
					branch = w
					break
				}
			}
			if branch >= 0 {
				break
			}
		}
	}
	if branch < 0 {
		for t := range fate {
			if fate[t] == undetermined && p.needed[t] {
				branch = TxnID(t)
				break
			}
		}
	}
	if branch >= 0 {
		fate[branch] = Committed
		e.fates(fate, append(slices.Clip(taken), branch))
		fate[branch] = Aborted
		e.fates(fate, taken)
		return
	}
	// Nobody needs the rest: leaving them out keeps every read as it is.
	for t := range fate {
		if fate[t] == undetermined {
			fate[t] = Aborted
		}
	}
	e.views(fate, taken)
}

// keyViews is what the committed readers of one key show.
type keyViews struct {
	key   KeyID
	reads []int32 // indexes into prep.reads, committed readers, good lists
	// longest is the index (into reads) of the longest view.
	longest int32
	// decomps are the explanations of the longest view: each a sequence
	// of appenders.
	decomps [][]TxnID
}

// views checks the committed readers' lists under fate and enumerates
// the appenders of every element.
func (e *listEnum) views(fate []Status, taken []TxnID) {
	p, h := e.p, e.p.h
	var fs []ListFinding
	add := func(f ListFinding) { fs = append(fs, f) }
	in := func(t TxnID) bool { return fate[t] == Committed }
	nk := len(h.Keys)
	byKey := make([][]int32, nk)
	for i, r := range p.reads {
		if !in(r.t) {
			continue
		}
		if r.bad {
			add(ListFinding{Kind: InternalList, Key: r.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1})
			continue
		}
		if f, ok := e.elementFinding(fate, r); !ok {
			add(f)
			continue
		}
		byKey[r.key] = append(byKey[r.key], int32(i))
	}
	var kvs []keyViews
	for k := range nk {
		rs := byKey[k]
		if len(rs) == 0 {
			continue
		}
		kv := keyViews{key: KeyID(k), reads: rs}
		for j, ri := range rs {
			if len(p.reads[ri].view) > len(p.reads[rs[kv.longest]].view) {
				kv.longest = int32(j)
			}
		}
		m := p.reads[rs[kv.longest]]
		ok := true
		for _, ri := range rs {
			r := p.reads[ri]
			if !isPrefix(r.view, m.view) {
				add(ListFinding{Kind: IncompatibleOrder, Key: KeyID(k), Txns: []TxnID{m.t, r.t}, Ops: []int32{m.op, r.op}, Value: -1, At: firstDiff(m.view, r.view)})
				ok = false
				break
			}
		}
		// Reads of one transaction: never less, and at levels from read
		// atomic on, the same.
		// (rs is in transaction and program order: a transaction's reads
		// of the key are consecutive, and comparing neighbours suffices.)
		for j := 1; j < len(rs); j++ {
			q, r := p.reads[rs[j-1]], p.reads[rs[j]]
			if q.t != r.t {
				continue
			}
			switch {
			case len(r.view) < len(q.view):
				add(ListFinding{Kind: InternalList, Key: KeyID(k), Txns: []TxnID{r.t, r.t}, Ops: []int32{q.op, r.op}, Value: -1})
				ok = false
			case len(r.view) > len(q.view):
				add(ListFinding{Kind: NonRepeatableList, Key: KeyID(k), Txns: []TxnID{r.t, r.t}, Ops: []int32{q.op, r.op}, Value: -1})
			}
		}
		if !ok {
			continue
		}
		kv.decomps = e.decompose(fate, &kv)
		if len(kv.decomps) == 0 {
			add(e.blockFinding(fate, &kv))
			continue
		}
		kvs = append(kvs, kv)
	}
	if len(fs) > 0 {
		// Findings of read-committed kind only (a longer re-read) still
		// leave the register view to decide the other levels.
		blocking := false
		for _, f := range fs {
			if f.Kind != NonRepeatableList {
				blocking = true
			}
		}
		if blocking {
			e.emit(&ListExplanation{Findings: fs}, fate)
			return
		}
	}
	choice := make([]int, len(kvs))
	var rec func(i int)
	rec = func(i int) {
		if e.done() {
			return
		}
		if i == len(kvs) {
			if e.seen(kvs, choice, taken) {
				e.emit(e.registerView(fate, kvs, choice, fs), fate)
			}
			return
		}
		for c := range kvs[i].decomps {
			choice[i] = c
			rec(i + 1)
		}
	}
	rec(0)
}

// seen reports whether every transaction in taken appears in some view of
// the chosen decompositions or has writes some transaction reads.
func (e *listEnum) seen(kvs []keyViews, choice []int, taken []TxnID) bool {
	for _, t := range taken {
		if e.p.needed[t] {
			continue
		}
		found := false
		for i, kv := range kvs {
			if slices.Contains(kv.decomps[choice[i]], t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// emit yields one explanation, counting it against the bound.
func (e *listEnum) emit(x *ListExplanation, fate []Status) {
	if e.done() {
		return
	}
	if e.count >= e.limit {
		e.over = true
		return
	}
	e.count++
	h := e.p.h
	for t := range fate {
		if h.Txns[t].Status == Unknown && e.p.relevant[t] {
			if fate[t] == Committed {
				x.Committed = append(x.Committed, TxnID(t))
			} else {
				x.Aborted = append(x.Aborted, TxnID(t))
			}
		}
	}
	if !e.yield(x, nil) {
		e.stopped = true
	}
}

// elementFinding checks that every element of r's view has an appender
// that may have committed, other than r, and as many of them as the view
// holds the value.
func (e *listEnum) elementFinding(fate []Status, r listRead) (ListFinding, bool) {
	p, h := e.p, e.p.h
	f := ListFinding{Key: r.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1}
	e.stamp++
	for pos, v := range r.view {
		ver := p.base[r.key] + int32(v)
		if e.mark[ver] != e.stamp {
			e.mark[ver], e.occurs[ver] = e.stamp, 0
		}
		e.occurs[ver]++
		cs := p.cands(r.key, v)
		if len(cs) == 1 && cs[0] != r.t && fate[cs[0]] != Aborted && e.occurs[ver] == 1 {
			continue // the common case: one appender, seen once so far
		}
		avail := int32(0)
		for _, w := range cs {
			if w != r.t && fate[w] != Aborted {
				avail += int32(count(p.block(w, r.key), v))
			}
		}
		if avail >= e.occurs[ver] {
			continue
		}
		f.Value, f.At = v, pos
		switch {
		case avail > 0 || e.occurs[ver] > 1:
			f.Kind = DuplicateElements
		case slices.Contains(p.block(r.t, r.key), v):
			f.Kind = FutureElement
			if slices.Contains(ownBefore(h, r.t, r.op), v) {
				f.Kind = InternalList
			}
		case p.aborted[p.base[r.key]+int32(v)] || anyFate(p.cands(r.key, v), fate, Aborted):
			f.Kind = AbortedElement
			for t := 1; t < len(h.Txns); t++ {
				if (h.Txns[t].Status == Aborted || fate[t] == Aborted) && appended(h, TxnID(t), r.key, v) {
					f.Writers = append(f.Writers, TxnID(t))
				}
			}
		default:
			f.Kind = GarbageElement
		}
		return f, false
	}
	return f, true
}

func anyFate(ts []TxnID, fate []Status, s Status) bool {
	for _, t := range ts {
		if fate[t] == s {
			return true
		}
	}
	return false
}

func appended(h *History, t TxnID, k KeyID, v ValueID) bool {
	for _, op := range h.Txns[t].Ops {
		if op.Kind == OpAppend && op.Key == k && op.Value == v {
			return true
		}
	}
	return false
}

func count(vs []ValueID, v ValueID) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

// decompose returns the ways (at most the bound) to spell the longest
// view of kv as whole blocks of distinct committed appenders, such that
// every view of the key ends at a block boundary and no reader's own
// block lies within its view.
func (e *listEnum) decompose(fate []Status, kv *keyViews) [][]TxnID {
	p := e.p
	m := p.reads[kv.reads[kv.longest]].view
	boundary := make([]bool, len(m)+1)
	readerEnd := map[TxnID]int{} // the longest view of each reader
	for _, ri := range kv.reads {
		r := p.reads[ri]
		boundary[len(r.view)] = true
		readerEnd[r.t] = max(readerEnd[r.t], len(r.view))
	}
	var out [][]TxnID
	var seq []TxnID
	used := map[TxnID]bool{}
	var rec func(pos int)
	rec = func(pos int) {
		if e.over {
			return
		}
		if pos == len(m) {
			if len(out) >= e.limit {
				e.over = true // never a silent cut: the caller reports it
				return
			}
			out = append(out, slices.Clone(seq))
			return
		}
		for _, w := range p.cands(kv.key, m[pos]) {
			if fate[w] != Committed || used[w] {
				continue
			}
			if end, ok := readerEnd[w]; ok && pos < end {
				continue // w's own block inside its own view
			}
			b := p.block(w, kv.key)
			if len(b) == 0 || pos+len(b) > len(m) || !slices.Equal(m[pos:pos+len(b)], b) {
				continue
			}
			bad := false
			for q := pos + 1; q < pos+len(b); q++ {
				if boundary[q] {
					bad = true // a view ends inside w's block
					break
				}
			}
			if bad {
				continue
			}
			used[w] = true
			seq = append(seq, w)
			rec(pos + len(b))
			seq = seq[:len(seq)-1]
			used[w] = false
		}
	}
	rec(0)
	return out
}

// blockFinding names why no decomposition exists. With one appender per
// element it finds the read and the block at fault; otherwise it reports
// the longest view as unexplained.
func (e *listEnum) blockFinding(fate []Status, kv *keyViews) ListFinding {
	p := e.p
	for _, ri := range kv.reads {
		r := p.reads[ri]
		pos := 0
		for pos < len(r.view) {
			var ws []TxnID
			for _, w := range p.cands(kv.key, r.view[pos]) {
				if w != r.t && fate[w] == Committed {
					ws = append(ws, w)
				}
			}
			if len(ws) != 1 {
				break
			}
			w := ws[0]
			b := p.block(w, kv.key)
			f := ListFinding{Key: kv.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: r.view[pos], At: pos, Writers: []TxnID{w}}
			switch {
			case b[0] != r.view[pos]:
				f.Kind = IncompatibleOrder
				return f
			case pos+len(b) > len(r.view) && slices.Equal(r.view[pos:], b[:len(r.view)-pos]):
				f.Kind = IntermediateList
				return f
			case pos+len(b) > len(r.view) || !slices.Equal(r.view[pos:pos+len(b)], b):
				f.Kind = IncompatibleOrder
				f.At = pos + firstDiff(r.view[pos:], b)
				return f
			}
			pos += len(b)
		}
	}
	r := p.reads[kv.reads[kv.longest]]
	return ListFinding{Kind: UnexplainedList, Key: kv.key, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: -1}
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []ValueID) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

func firstDiff(a, b []ValueID) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// registerView builds the register view of one explanation: fates fixed,
// and kvs[i]'s decomposition choice[i] naming the appender of every
// element.
func (e *listEnum) registerView(fate []Status, kvs []keyViews, choice []int, fs []ListFinding) *ListExplanation {
	p, h := e.p, e.p.h
	nk := len(h.Keys)
	g := &History{
		Source: h.Source, Format: h.Format, Sessions: h.Sessions, InitKind: h.InitKind,
		Keys: slices.Clone(h.Keys), Values: slices.Clone(h.Values), AbortedWrites: h.AbortedWrites,
		VersionHints: slices.Clone(h.VersionHints), Warnings: h.Warnings, Meta: h.Meta, Dropped: h.Dropped,
	}
	if h.KeyNames != nil {
		g.KeyNames = slices.Clone(h.KeyNames)
	}
	if h.ValueNames != nil {
		g.ValueNames = slices.Clone(h.ValueNames)
	}
	// The version each committed appender installs: its block's last
	// value, or a fresh stand-in when another transaction appended that
	// value too. bver[t][j] is that of t's block j; keyApp[k] lists the
	// committed appenders of k in TxnID order.
	bver := make([][]ValueID, len(h.Txns))
	keyApp := make([][]TxnID, nk)
	var owner map[int32]TxnID
	for t := 1; t < len(h.Txns); t++ {
		if fate[t] != Committed || len(p.blocks[t]) == 0 {
			continue
		}
		bver[t] = make([]ValueID, len(p.blocks[t]))
		for j, b := range p.blocks[t] {
			k := b.key
			v := b.vals[len(b.vals)-1]
			ver := p.base[k] + int32(v)
			if len(p.appenders[ver]) > 1 || count(b.vals, v) > 1 || p.aborted[ver] {
				if owner == nil {
					owner = map[int32]TxnID{}
				}
				if o, ok := owner[ver]; ok && o != TxnID(t) {
					v = freshValue(g, k, v, h.TxnString(TxnID(t)))
				} else {
					owner[ver] = TxnID(t)
				}
			}
			bver[t][j] = v
			keyApp[k] = append(keyApp[k], TxnID(t))
		}
	}
	version := func(t TxnID, k KeyID) ValueID {
		for j, b := range p.blocks[t] {
			if b.key == k {
				return bver[t][j]
			}
		}
		return -1
	}
	// Stated orders: the blocks of each longest view, then every other
	// committed appender after its last block.
	inSeq := make([]int32, len(h.Txns)) // == i+1: in kvs[i]'s sequence
	for i, kv := range kvs {
		seq := kv.decomps[choice[i]]
		k := kv.key
		for j, w := range seq {
			inSeq[w] = int32(i + 1)
			if j > 0 {
				g.VersionHints = append(g.VersionHints, VersionHint{Key: k, Before: version(seq[j-1], k), After: version(w, k)})
			}
		}
		if len(seq) == 0 {
			continue // every appender follows T⊥, whose version was read
		}
		last := version(seq[len(seq)-1], k)
		for _, w := range keyApp[k] {
			if inSeq[w] != int32(i+1) {
				g.VersionHints = append(g.VersionHints, VersionHint{Key: k, Before: last, After: version(w, k)})
			}
		}
	}
	// Each read's view: the appenders of its blocks, as a prefix of its
	// key's decomposition.
	viewOf := make([][]TxnID, len(p.reads))
	var views []ListView
	for i, kv := range kvs {
		seq := kv.decomps[choice[i]]
		k := kv.key
		for _, ri := range kv.reads {
			n, pos := 0, 0
			r := p.reads[ri]
			for pos < len(r.view) {
				pos += len(p.block(seq[n], k))
				n++
			}
			viewOf[ri] = seq[:n]
			if e.ambiguous(r) {
				views = append(views, ListView{Txn: r.t, Op: r.op, Appenders: slices.Clone(seq[:n])})
			}
		}
	}
	visKey := map[TxnID]KeyID{}
	one := ValueID(0)
	var vis func(TxnID) KeyID
	nOps := 0
	fresh := newFreshNames(g)
	vis = func(w TxnID) KeyID {
		if k, ok := visKey[w]; ok {
			return k
		}
		k := fresh.key("appends of " + h.TxnString(w))
		visKey[w] = k
		g.Values = append(g.Values, []int64{1})
		if g.ValueNames != nil {
			g.ValueNames = append(g.ValueNames, nil)
		}
		return k
	}
	for t := range h.Txns {
		nOps += len(h.Txns[t].Ops) + 2*len(p.blocks[t])
	}
	ops := make([]Op, 0, nOps)
	origin := make([][]int32, len(h.Txns))
	g.Txns = make([]Txn, len(h.Txns))
	var orig []int32
	visSeen := make([]int32, len(h.Txns)) // == t: t reads w's stand-in already
	readKey := make([]int32, nk)          // == t: t reads the key
	// Per session, the latest transaction (by index) a read's view is
	// known to see so far: an earlier one of the same session precedes
	// it in session order, and so is seen too where visibility is
	// transitive.
	sessLatest := make([]int32, len(h.Sessions))
	sessStamp := make([]int32, len(h.Sessions))
	visRead := int32(0)
	seen := func(w TxnID) {
		s := h.Txns[w].Session
		if sessStamp[s] != visRead || sessLatest[s] < h.Txns[w].Index {
			sessStamp[s], sessLatest[s] = visRead, h.Txns[w].Index
		}
	}
	before := func(w TxnID) bool {
		s := h.Txns[w].Session
		return sessStamp[s] == visRead && sessLatest[s] > h.Txns[w].Index
	}
	// covOf is how many blocks of k's version order w's own view of k
	// holds (its reads of k all show one view at levels from RA on).
	covOf := func(w TxnID, k KeyID) int {
		n := 0
		for _, ri := range p.readsOf[w] {
			if p.reads[ri].key == k {
				n = max(n, len(viewOf[ri]))
			}
		}
		return n
	}
	for t := range h.Txns {
		tx := h.Txns[t]
		if fate[t] == Committed {
			tx.Status = Committed
		} else if fate[t] == Aborted {
			tx.Status = Aborted
		}
		start := len(ops)
		orig = orig[:0]
		if e.opt.Visibility == VisibleReadKeys {
			for _, op := range tx.Ops {
				if op.Kind.IsRead() {
					readKey[op.Key] = int32(t)
				}
			}
		}
		for i, op := range tx.Ops {
			switch {
			case t == 0 || !p.isList[op.Key]:
				ops = append(ops, op)
				orig = append(orig, int32(i))
			case op.Kind == OpAppend:
				if tx.Status == Aborted {
					ops = append(ops, Op{Kind: OpWrite, Key: op.Key, Value: op.Value})
					orig = append(orig, int32(i))
				}
			case tx.Status == Committed:
				ri := p.readsOf[t][slices.IndexFunc(p.readsOf[t], func(ri int32) bool { return p.reads[ri].op == int32(i) })]
				seq := viewOf[ri]
				if e.opt.Visibility != VisibleNone && len(seq) > 1 {
					cov := 0 // seq[:cov] is covered
					if e.opt.Visibility == VisibleCovered {
						cov = covOf(seq[len(seq)-1], op.Key)
						visRead++
						seen(seq[len(seq)-1])
					}
					for j := len(seq) - 2; j >= 0; j-- {
						w := seq[j]
						switch e.opt.Visibility {
						case VisibleReadKeys:
							if !p.writesReadKey(w, op.Key, readKey, int32(t)) {
								continue
							}
						case VisibleCovered:
							if j < cov || before(w) {
								continue
							}
							cov = max(cov, covOf(w, op.Key))
							seen(w)
						}
						if visSeen[w] != int32(t) {
							visSeen[w] = int32(t)
							ops = append(ops, Op{Kind: OpRead, Key: vis(w), Value: one})
							orig = append(orig, -1)
						}
					}
				}
				v := p.empty[op.Key]
				if len(seq) > 0 {
					v = version(seq[len(seq)-1], op.Key)
				}
				ops = append(ops, Op{Kind: OpRead, Key: op.Key, Value: v})
				orig = append(orig, int32(i))
			}
		}
		if tx.Status == Committed && t > 0 {
			for j, b := range p.blocks[t] {
				ops = append(ops, Op{Kind: OpWrite, Key: b.key, Value: bver[t][j]})
				orig = append(orig, lastAppend(h, TxnID(t), b.key))
			}
			if k, ok := visKey[TxnID(t)]; ok {
				ops = append(ops, Op{Kind: OpWrite, Key: k, Value: one})
				orig = append(orig, -1)
			}
		}
		tx.Ops = ops[start:len(ops):len(ops)]
		origin[t] = slices.Clone(orig)
		g.Txns[t] = tx
	}
	// A stand-in key is written by an appender processed after some of its
	// readers: those reads were added first, which is fine, but an
	// appender whose key was made after its own transaction was laid out
	// still needs its write.
	for w, k := range visKey {
		tx := &g.Txns[w]
		if n := len(tx.Ops); n > 0 && tx.Ops[n-1].Key == k {
			continue
		}
		tx.Ops = append(slices.Clip(tx.Ops), Op{Kind: OpWrite, Key: k, Value: one})
		origin[w] = append(origin[w], -1)
	}
	slices.SortFunc(views, func(a, b ListView) int {
		if a.Txn != b.Txn {
			return int(a.Txn - b.Txn)
		}
		return int(a.Op - b.Op)
	})
	return &ListExplanation{H: g, Findings: fs, OpOrigin: origin, Views: views}
}

// ambiguous reports whether some element of r's view has several possible
// appenders.
func (e *listEnum) ambiguous(r listRead) bool {
	for _, v := range r.view {
		if len(e.p.cands(r.key, v)) > 1 {
			return true
		}
	}
	return false
}

func lastAppend(h *History, t TxnID, k KeyID) int32 {
	ops := h.Txns[t].Ops
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == OpAppend && ops[i].Key == k {
			return int32(i)
		}
	}
	return -1
}

// freshValue adds to key k a stand-in for value v as written by the named
// transaction: an unused raw value, printed as v's name with the writer.
// Renames are few (values appended more than once), so a scan is enough.
func freshValue(g *History, k KeyID, v ValueID, writer string) ValueID {
	raw := int64(math.MinInt64 + 1)
	for slices.Contains(g.Values[k], raw) {
		raw++
	}
	name := g.ValueString(k, v) + " (" + writer + ")"
	g.Values[k] = append(slices.Clip(g.Values[k]), raw)
	if g.ValueNames == nil {
		g.ValueNames = make([][]string, len(g.Keys))
	}
	names := slices.Clip(g.ValueNames[k])
	for len(names) < len(g.Values[k])-1 {
		names = append(names, "")
	}
	g.ValueNames[k] = append(names, name)
	return ValueID(len(g.Values[k]) - 1)
}

// freshNames hands out stand-in keys whose raw values no key uses.
type freshNames struct {
	g    *History
	used map[int64]bool
	next int64
}

func newFreshNames(g *History) *freshNames {
	used := make(map[int64]bool, len(g.Keys))
	for _, k := range g.Keys {
		used[k] = true
	}
	return &freshNames{g: g, used: used, next: math.MinInt64 + 1}
}

// key adds a stand-in key with the given name.
func (f *freshNames) key(name string) KeyID {
	for f.used[f.next] {
		f.next++
	}
	g := f.g
	if g.KeyNames == nil {
		g.KeyNames = make([]string, len(g.Keys))
	}
	g.Keys = append(g.Keys, f.next)
	g.KeyNames = append(g.KeyNames, name)
	f.next++
	return KeyID(len(g.Keys) - 1)
}
