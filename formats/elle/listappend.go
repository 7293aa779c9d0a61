package elle

import (
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
)

// FindingKind is an anomaly that the list reads of a list-append history
// show without any ordering of transactions.
type FindingKind uint8

const (
	// IncompatibleOrder: two reads of one key returned lists neither of
	// which is a prefix of the other, so no single version order of the key
	// explains both (Elle's incompatible-order).
	IncompatibleOrder FindingKind = iota
	// DuplicateElements: a list holds twice a value that was appended at
	// most once (Elle's duplicate-elements).
	DuplicateElements
	// GarbageElement: a list element that no transaction appended (Elle's
	// garbage read). When it is the last element (Finding.Last), the same
	// read is a thin-air read for history.Validate.
	GarbageElement
	// AbortedElement: a list element that only aborted transactions
	// appended (G1a). When it is the last element (Finding.Last), the same
	// read is an aborted read for history.Validate.
	AbortedElement
)

var findingNames = [...]string{"incompatible-order", "duplicate-elements", "garbage-read", "aborted-read"}

// String returns the stable name used in reports (Elle's where it has one).
func (k FindingKind) String() string {
	if int(k) < len(findingNames) {
		return findingNames[k]
	}
	return fmt.Sprintf("FindingKind(%d)", k)
}

// Class returns the Adya/Elle class of the kind, where one exists.
func (k FindingKind) Class() string {
	if k == AbortedElement {
		return "G1a"
	}
	return ""
}

// Finding is one anomaly found by Analyze.
type Finding struct {
	Kind FindingKind
	Key  history.KeyID
	// Txns are the committed readers: for IncompatibleOrder the two whose
	// lists disagree (the one whose list was seen first, then the other),
	// otherwise the one reader.
	Txns []history.TxnID
	// Ops index the list reads in their transactions' Ops, parallel to Txns.
	Ops []int32
	// Value is the offending element; -1 for IncompatibleOrder.
	Value history.ValueID
	// At is the position (from 0) of the offending element in the list, or
	// for IncompatibleOrder the first position at which the two lists
	// differ.
	At int
	// Last is set when the offending element of a GarbageElement or
	// AbortedElement finding ends its list: history.Validate reports that
	// read too (thin-air-read, aborted-read), so a report may leave it out.
	Last bool
	// Internal is set when a list involved was read after its reader's own
	// write of the key: it then shows the reader's own appends on top of
	// what it observed, which contradicts only levels whose transactions
	// install their writes atomically on the version they read (SI, SER).
	Internal bool
	// Writers are, for AbortedElement, the aborted transactions that
	// appended the value.
	Writers []history.TxnID
}

// ForbiddenAt reports whether a history with this finding violates level l.
func (f Finding) ForbiddenAt(l history.Level) bool {
	if f.Kind == IncompatibleOrder && f.Internal {
		return l == history.SI || l == history.SER
	}
	return true
}

// Describe renders the finding as one line.
func (f Finding) Describe(h *history.History) string {
	var b strings.Builder
	r := f.Txns[len(f.Txns)-1]
	list := listOf(h, r, f.Ops[len(f.Ops)-1])
	switch f.Kind {
	case IncompatibleOrder:
		r0 := f.Txns[0]
		fmt.Fprintf(&b, "incompatible-order on key %s: %s read %s and %s read %s; neither list is a prefix of the other (they differ at position %d)",
			h.KeyString(f.Key), h.TxnString(r0), renderList(h, f.Key, listOf(h, r0, f.Ops[0]), f.At),
			h.TxnString(r), renderList(h, f.Key, list, f.At), f.At)
	case DuplicateElements:
		fmt.Fprintf(&b, "duplicate-elements: %s read key %s = %s, which holds %d twice although it was appended at most once",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.Value(f.Key, f.Value))
	case GarbageElement:
		fmt.Fprintf(&b, "garbage-read: %s read key %s = %s, whose element %d no transaction appended",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.Value(f.Key, f.Value))
	case AbortedElement:
		fmt.Fprintf(&b, "aborted-read (G1a): %s read key %s = %s, whose element %d only aborted transactions appended",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.Value(f.Key, f.Value))
		for i, w := range f.Writers {
			if i == 0 {
				b.WriteString(" (")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(h.TxnString(w))
			if i == len(f.Writers)-1 {
				b.WriteString(")")
			}
		}
	default:
		b.WriteString(f.Kind.String())
	}
	return b.String()
}

func listOf(h *history.History, t history.TxnID, op int32) []history.ValueID {
	return h.List(h.Txns[t].Ops[op])
}

// renderList prints a list, shortened around position at (or its start and
// end when at < 0) if it is long.
func renderList(h *history.History, k history.KeyID, l []history.ValueID, at int) string {
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
		fmt.Fprint(&b, h.Value(k, l[i]))
	}
	if hi < len(l) {
		b.WriteString(" …")
	}
	b.WriteByte(']')
	return b.String()
}

// Analysis is what the list reads of a history say.
type Analysis struct {
	// Hints are the version orders the lists state, deduplicated, per key in
	// KeyID order: for each maximal list (one not a prefix of another read
	// list of its key) every pair of consecutive elements, and for every
	// value appended to the key by a transaction that may have committed
	// but missing from that list, the pair (last element, value): a value
	// absent from a list read was not installed before the list's last
	// element. Where values appended more than once (whose writer is
	// uncertain) stand in between, the pairs also skip over them, from the
	// nearest element appended once.
	Hints    []history.VersionHint
	Findings []Finding
}

// maxBranches bounds the mutually incompatible lists kept per key: beyond
// it, further incompatible lists are still reported but give no hints.
const maxBranches = 16

// Analyze reads the list reads (OpReadList) of the committed transactions
// of h. The reader stores the hints in h.VersionHints; Analyze is exported
// for histories that reach hyperiso through other formats and for the
// findings, which belong in a report (Finding.ForbiddenAt says at which
// levels).
//
// Hints taken from a list read after its reader's own append rely, like
// the Internal findings, on the atomic installs of SI and SER: they are
// facts for the strong levels (and strict serializability), which is where
// the hyper-polygraph uses them.
func Analyze(h *history.History) *Analysis { return analyze(h) }

type listRead struct {
	t        history.TxnID
	op       int32
	list     int32
	internal bool
}

func analyze(h *history.History) *Analysis {
	a := &Analysis{}
	nk := len(h.Keys)
	base := make([]int32, nk+1)
	for k := range nk {
		base[k+1] = base[k] + int32(len(h.Values[k]))
	}
	nv := base[nk]
	appended := make([]int32, nv) // appends by transactions that may have committed
	aborted := make([]bool, nv)
	reads := make([][]listRead, nk)
	wrote := make([]history.TxnID, nk) // t+1 when t wrote the key already
	haveReads := false
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for i, op := range tx.Ops {
			k := op.Key
			switch {
			case op.Kind.IsWrite():
				if tx.Status == history.Aborted {
					aborted[base[k]+op.Value] = true
				} else {
					appended[base[k]+op.Value]++
				}
				wrote[k] = history.TxnID(t + 1)
			case op.Kind == history.OpReadList && tx.Status == history.Committed:
				haveReads = true
				reads[k] = append(reads[k], listRead{t: history.TxnID(t), op: int32(i), list: op.List - 1, internal: wrote[k] == history.TxnID(t+1)})
			}
		}
	}
	if !haveReads {
		return a
	}
	for _, w := range h.AbortedWrites {
		aborted[base[w.Key]+w.Value] = true
	}
	mark := make([]int32, nv)
	stamp := int32(0)
	wantWriters := map[int32][]int{} // version → AbortedElement findings
	seen := map[uint64]bool{}
	for k := range nk {
		rs := reads[k]
		if len(rs) == 0 {
			continue
		}
		kid := history.KeyID(k)
		var branches []int // indices into rs of the maximal lists
		for ri, r := range rs {
			l := h.Lists[r.list]
			stamp++
			dup, bad := false, false
			for pos, v := range l {
				ver := base[k] + v
				if mark[ver] == stamp && !dup && appended[ver] <= 1 {
					dup = true
					a.Findings = append(a.Findings, Finding{Kind: DuplicateElements, Key: kid, Txns: []history.TxnID{r.t}, Ops: []int32{r.op}, Value: v, At: pos})
				}
				mark[ver] = stamp
				if appended[ver] == 0 && !bad {
					bad = true
					f := Finding{Kind: GarbageElement, Key: kid, Txns: []history.TxnID{r.t}, Ops: []int32{r.op}, Value: v, At: pos, Last: pos == len(l)-1}
					if aborted[ver] {
						f.Kind = AbortedElement
						wantWriters[ver] = append(wantWriters[ver], len(a.Findings))
					}
					a.Findings = append(a.Findings, f)
				}
			}
			if len(l) == 0 {
				continue
			}
			related := false
			for bi, b := range branches {
				m := h.Lists[rs[b].list]
				if isPrefix(l, m) {
					related = true
					break
				}
				if isPrefix(m, l) {
					branches[bi] = ri
					related = true
					break
				}
			}
			if related {
				continue
			}
			if len(branches) > 0 {
				o := rs[branches[0]]
				a.Findings = append(a.Findings, Finding{Kind: IncompatibleOrder, Key: kid,
					Txns: []history.TxnID{o.t, r.t}, Ops: []int32{o.op, r.op}, Value: -1,
					At: firstDiff(h.Lists[o.list], l), Internal: o.internal || r.internal})
			}
			if len(branches) < maxBranches {
				branches = append(branches, ri)
			}
		}
		clear(seen)
		hint := func(x, y history.ValueID) {
			if x == y {
				return
			}
			key := uint64(uint32(x))<<32 | uint64(uint32(y))
			if !seen[key] {
				seen[key] = true
				a.Hints = append(a.Hints, history.VersionHint{Key: kid, Before: x, After: y})
			}
		}
		for _, b := range branches {
			m := h.Lists[rs[b].list]
			// Consecutive elements; across values appended more than once
			// (whose writer is uncertain) also the unique elements on
			// either side.
			lastUnique := history.ValueID(-1)
			for i, v := range m {
				if i > 0 {
					hint(m[i-1], v)
				}
				if appended[base[k]+v] <= 1 {
					if lastUnique >= 0 && (i == 0 || m[i-1] != lastUnique) {
						hint(lastUnique, v)
					}
					lastUnique = v
				}
			}
			stamp++
			for _, v := range m {
				mark[base[k]+v] = stamp
			}
			last := m[len(m)-1]
			for v := range history.ValueID(len(h.Values[k])) {
				if ver := base[k] + v; appended[ver] > 0 && mark[ver] != stamp {
					hint(last, v)
					if lastUnique >= 0 && lastUnique != last {
						hint(lastUnique, v)
					}
				}
			}
		}
	}
	if len(wantWriters) > 0 {
		for t := 1; t < len(h.Txns); t++ {
			tx := &h.Txns[t]
			if tx.Status != history.Aborted {
				continue
			}
			for _, op := range tx.Ops {
				if !op.Kind.IsWrite() {
					continue
				}
				for _, fi := range wantWriters[base[op.Key]+op.Value] {
					f := &a.Findings[fi]
					if n := len(f.Writers); n == 0 || f.Writers[n-1] != history.TxnID(t) {
						f.Writers = append(f.Writers, history.TxnID(t))
					}
				}
			}
		}
	}
	return a
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []history.ValueID) bool {
	if len(a) > len(b) {
		return false
	}
	for i, x := range a {
		if b[i] != x {
			return false
		}
	}
	return true
}

func firstDiff(a, b []history.ValueID) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// UnknownAppenders lists, for every value observed in a committed list read
// (not only as its last element) that no committed transaction appended to
// its key but some transactions of unknown outcome did, the set of those
// transactions, ascending; the sets are deduplicated and in order of first
// observation. One of each set must have committed for the list to exist.
// A checker that decides which unknown transactions to take as committed
// from reads of last elements (the register view) must also force the
// single member of a one-element set in, and treat larger sets as it treats
// a read with several unknown candidates; otherwise a list element loses
// its only writer, and the version hints around it name the wrong one.
func UnknownAppenders(h *history.History) [][]history.TxnID {
	nk := len(h.Keys)
	base := make([]int32, nk+1)
	for k := range nk {
		base[k+1] = base[k] + int32(len(h.Values[k]))
	}
	committed := make([]bool, base[nk])
	unknown := map[int32][]history.TxnID{}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for _, op := range tx.Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := base[op.Key] + op.Value
			switch tx.Status {
			case history.Committed:
				committed[ver] = true
			case history.Unknown:
				if l := unknown[ver]; len(l) == 0 || l[len(l)-1] != history.TxnID(t) {
					unknown[ver] = append(l, history.TxnID(t))
				}
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var out [][]history.TxnID
	done := map[int32]bool{}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status != history.Committed {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind != history.OpReadList {
				continue
			}
			for _, v := range h.List(op) {
				ver := base[op.Key] + v
				if committed[ver] || done[ver] || len(unknown[ver]) == 0 {
					continue
				}
				done[ver] = true
				out = append(out, unknown[ver])
			}
		}
	}
	return out
}
