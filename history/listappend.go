package history

import (
	"fmt"
	"strings"
	"sync"
)

// This file is what list-append reads mean, for every reader: a read of the
// list [a b c] on key x observed the appends of a, b and c in that order,
// and none of the other appends to x. Readers only record the lists
// (OpReadList); ListFacts derives the rest once per History, so that a
// history means the same whatever file it came from.

// ListFindingKind is an anomaly that the list reads of a list-append
// history show without any ordering of transactions.
type ListFindingKind uint8

const (
	// IncompatibleOrder: two reads of one key returned lists neither of
	// which is a prefix of the other, so no single version order of the key
	// explains both (Elle's incompatible-order).
	IncompatibleOrder ListFindingKind = iota
	// DuplicateElements: a list holds twice a value that was appended at
	// most once (Elle's duplicate-elements).
	DuplicateElements
	// GarbageElement: a list element that no transaction appended (Elle's
	// garbage read). When it is the last element (ListFinding.Last), the
	// same read is a thin-air read for Validate.
	GarbageElement
	// AbortedElement: a list element that only aborted transactions
	// appended (G1a). When it is the last element (ListFinding.Last), the
	// same read is an aborted read for Validate.
	AbortedElement
	// FutureElement: a list element that only its reader appends, after
	// the read (a future read anywhere in the list). When it is the last
	// element, Validate reports the same read as a future read.
	FutureElement
)

var listFindingNames = [...]string{"incompatible-order", "duplicate-elements", "garbage-read", "aborted-read", "future-read"}

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
	// Txns are the committed readers: for IncompatibleOrder the two whose
	// lists disagree (the one whose list was seen first, then the other),
	// otherwise the one reader.
	Txns []TxnID
	// Ops index the list reads in their transactions' Ops, parallel to Txns.
	Ops []int32
	// Value is the offending element; -1 for IncompatibleOrder.
	Value ValueID
	// At is the position (from 0) of the offending element in the list, or
	// for IncompatibleOrder the first position at which the two lists
	// differ.
	At int
	// Last is set when the offending element ends its list: Validate
	// reports that read too (thin-air-read, aborted-read, future-read), so
	// a report may leave it out.
	Last bool
	// Internal is set when a list involved was read after its reader's own
	// write of the key: it then shows the reader's own appends on top of
	// what it observed, which contradicts only levels whose transactions
	// install their writes atomically on the version they read (SI, SER).
	Internal bool
	// Writers are, for AbortedElement, the aborted transactions that
	// appended the value.
	Writers []TxnID
}

// ForbiddenAt reports whether a history with this finding violates level l.
func (f ListFinding) ForbiddenAt(l Level) bool {
	if f.Kind == IncompatibleOrder && f.Internal {
		return l.Atomic()
	}
	return mustClass(f.Kind.String()).ForbiddenAt(l)
}

// Describe renders the finding as one line.
func (f ListFinding) Describe(h *History) string {
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
		fmt.Fprintf(&b, "duplicate-elements: %s read key %s = %s, which holds %s twice although it was appended at most once",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
	case GarbageElement:
		fmt.Fprintf(&b, "garbage-read: %s read key %s = %s, whose element %s no transaction appended",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
	case FutureElement:
		fmt.Fprintf(&b, "future-read: %s read key %s = %s, whose element %s (position %d) only it appends, later",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, f.At), h.ValueString(f.Key, f.Value), f.At)
	case AbortedElement:
		fmt.Fprintf(&b, "aborted-read (G1a): %s read key %s = %s, whose element %s only aborted transactions appended",
			h.TxnString(r), h.KeyString(f.Key), renderList(h, f.Key, list, -1), h.ValueString(f.Key, f.Value))
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

func listOf(h *History, t TxnID, op int32) []ValueID {
	return h.List(h.Txns[t].Ops[op])
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

// ListFacts is what the list reads of a history say.
type ListFacts struct {
	// Hints are version orders the lists state, deduplicated, per key in
	// KeyID order, taken from the lists read before their reader's own
	// write of the key; they hold at every level (a single version order
	// per key, as Adya and Elle assume). For each maximal list (one not a
	// prefix of another such list of its key): every pair of consecutive
	// elements, and for every value appended to the key by a transaction
	// that may have committed but missing from that list, the pair (last
	// element, value): a value absent from a list read was not installed
	// before the list's last element. Where values appended more than once
	// (whose writer is uncertain) stand in between, the pairs also skip
	// over them, from the nearest element appended once.
	Hints []VersionHint
	// AtomicHints are the further hints that the lists read after their
	// reader's own append give: they show the reader's appends on top of
	// what it observed, which is a version order only at levels whose
	// transactions install their writes at once (Level.Atomic).
	AtomicHints []VersionHint
	// Findings are the anomalies the lists show (ListFinding.ForbiddenAt
	// says at which levels).
	Findings []ListFinding
	// UnknownAppenders lists, for every value observed in a committed list
	// read (not only as its last element) that no committed transaction
	// appended to its key but some transactions of unknown outcome did,
	// the set of those transactions, ascending; the sets are deduplicated
	// and in order of first observation. One of each set must have
	// committed for the list to exist: a checker that decides which
	// unknown transactions to take as committed from the reads of last
	// elements (the register view) must also force in the single member
	// of a one-element set, and treat larger sets as it treats a read with
	// several unknown candidates; otherwise a list element loses its only
	// writer, and the version hints around it name the wrong one.
	UnknownAppenders [][]TxnID
}

// HintsAt returns the version orders that hold at level l: the hints the
// input states outright (VersionHints) and those of the list reads.
func (h *History) HintsAt(l Level) []VersionHint {
	lf := h.ListFacts()
	n := len(h.VersionHints) + len(lf.Hints)
	if l.Atomic() {
		n += len(lf.AtomicHints)
	}
	if n == 0 {
		return nil
	}
	out := make([]VersionHint, 0, n)
	out = append(out, h.VersionHints...)
	out = append(out, lf.Hints...)
	if l.Atomic() {
		out = append(out, lf.AtomicHints...)
	}
	return out
}

// ListFacts returns what the list reads of h say, computing it once; it is
// safe for concurrent use. A history without list reads has empty facts.
func (h *History) ListFacts() *ListFacts {
	h.lists.once.Do(func() { h.lists.lf = analyzeLists(h) })
	return h.lists.lf
}

// lazyListFacts caches a History's ListFacts inside it.
type lazyListFacts struct {
	once sync.Once
	lf   *ListFacts
}

// maxBranches bounds the mutually incompatible lists kept per key: beyond
// it, further incompatible lists are still reported but give no hints.
const maxBranches = 16

type listRead struct {
	t        TxnID
	op       int32
	list     int32
	internal bool
}

// listScan holds the per-version tables of one analysis.
type listScan struct {
	h *History
	// base numbers versions as Index.VerBase does.
	base []int32
	// appended counts, per version, the appends by transactions that may
	// have committed, and writers those transactions; aborted marks
	// versions only aborted writes made.
	appended []int32
	writers  []int32
	aborted  []bool
	mark     []int32
	stamp    int32
	seen     map[uint64]bool
}

func analyzeLists(h *History) *ListFacts {
	lf := &ListFacts{}
	if len(h.Lists) == 0 {
		return lf
	}
	nk := len(h.Keys)
	s := &listScan{h: h, base: h.Index().VerBase, seen: map[uint64]bool{}}
	nv := s.base[nk]
	s.appended = make([]int32, nv)
	s.writers = make([]int32, nv)
	s.aborted = make([]bool, nv)
	lastWriter := make([]TxnID, nv)
	s.mark = make([]int32, nv)
	reads := make([][]listRead, nk)
	wrote := make([]TxnID, nk) // t+1 when t wrote the key already
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for i, op := range tx.Ops {
			k := op.Key
			switch {
			case op.Kind.IsWrite():
				ver := verOf(s.base, k, op.Value)
				if tx.Status == Aborted {
					s.aborted[ver] = true
				} else {
					s.appended[ver]++
					if lastWriter[ver] != TxnID(t) {
						lastWriter[ver] = TxnID(t)
						s.writers[ver]++
					}
				}
				wrote[k] = TxnID(t + 1)
			case op.Kind == OpReadList && tx.Status == Committed:
				reads[k] = append(reads[k], listRead{t: TxnID(t), op: int32(i), list: op.List - 1, internal: wrote[k] == TxnID(t+1)})
			}
		}
	}
	for _, w := range h.AbortedWrites {
		s.aborted[verOf(s.base, w.Key, w.Value)] = true
	}
	wantWriters := map[int32][]int{} // version → AbortedElement findings
	var external []listRead
	for k := range nk {
		rs := reads[k]
		if len(rs) == 0 {
			continue
		}
		kid := KeyID(k)
		for _, r := range rs {
			s.elementFindings(lf, kid, r, wantWriters)
		}
		external = external[:0]
		for _, r := range rs {
			if !r.internal {
				external = append(external, r)
			}
		}
		// Incompatible orders between lists read before any own append
		// are forbidden everywhere; those involving a later read only at
		// atomic levels, so each pair is reported in its pass.
		ext := s.hints(nil, kid, external, s.branches(lf, kid, external, false))
		if len(external) == len(rs) {
			lf.Hints = append(lf.Hints, ext...)
			continue
		}
		all := s.hints(nil, kid, rs, s.branches(lf, kid, rs, true))
		lf.Hints = append(lf.Hints, ext...)
		// The atomic-only hints are those the external lists do not give.
		clear(s.seen)
		for _, vh := range ext {
			s.seen[pairKey(vh.Before, vh.After)] = true
		}
		for _, vh := range all {
			if !s.seen[pairKey(vh.Before, vh.After)] {
				lf.AtomicHints = append(lf.AtomicHints, vh)
			}
		}
	}
	if len(wantWriters) > 0 {
		for t := 1; t < len(h.Txns); t++ {
			tx := &h.Txns[t]
			if tx.Status != Aborted {
				continue
			}
			for _, op := range tx.Ops {
				if !op.Kind.IsWrite() {
					continue
				}
				for _, fi := range wantWriters[verOf(s.base, op.Key, op.Value)] {
					f := &lf.Findings[fi]
					if n := len(f.Writers); n == 0 || f.Writers[n-1] != TxnID(t) {
						f.Writers = append(f.Writers, TxnID(t))
					}
				}
			}
		}
	}
	lf.UnknownAppenders = unknownAppenders(h, s.base)
	return lf
}

func pairKey(x, y ValueID) uint64 { return uint64(uint32(x))<<32 | uint64(uint32(y)) }

// elementFindings reports the duplicate, garbage, aborted and future
// elements of one list read, each kind at most once per list.
func (s *listScan) elementFindings(lf *ListFacts, k KeyID, r listRead, wantWriters map[int32][]int) {
	h := s.h
	l := h.Lists[r.list]
	s.stamp++
	// Only a reader that appends to k after the read can read the future;
	// one finding per list is enough.
	noFuture := true
	for _, op := range h.Txns[r.t].Ops[r.op+1:] {
		if op.Kind.IsWrite() && op.Key == k {
			noFuture = false
			break
		}
	}
	dup, bad := false, false
	for pos, v := range l {
		ver := verOf(s.base, k, v)
		last := pos == len(l)-1
		if s.mark[ver] == s.stamp && !dup && s.appended[ver] <= 1 {
			dup = true
			lf.Findings = append(lf.Findings, ListFinding{Kind: DuplicateElements, Key: k, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: v, At: pos})
		}
		s.mark[ver] = s.stamp
		switch {
		case s.appended[ver] == 0 && !bad:
			bad = true
			f := ListFinding{Kind: GarbageElement, Key: k, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: v, At: pos, Last: last}
			if s.aborted[ver] {
				f.Kind = AbortedElement
				wantWriters[ver] = append(wantWriters[ver], len(lf.Findings))
			}
			lf.Findings = append(lf.Findings, f)
		case !noFuture && s.onlyLaterOwn(r, k, v):
			noFuture = true
			lf.Findings = append(lf.Findings, ListFinding{Kind: FutureElement, Key: k, Txns: []TxnID{r.t}, Ops: []int32{r.op}, Value: v, At: pos, Last: last})
		}
	}
}

// onlyLaterOwn reports whether every append of v to k that may have
// committed is the reader's own, made after the read and not before.
func (s *listScan) onlyLaterOwn(r listRead, k KeyID, v ValueID) bool {
	ops := s.h.Txns[r.t].Ops
	own := int32(0)
	for i, op := range ops {
		if op.Kind.IsWrite() && op.Key == k && op.Value == v {
			if int32(i) < r.op {
				return false
			}
			own++
		}
	}
	return own > 0 && own == s.appended[verOf(s.base, k, v)]
}

// branches returns the indices into rs of the maximal lists (at most
// maxBranches), reporting the incompatible orders of lists none of which
// is a prefix of another: all of them, or with onlyInternal those where a
// list read after its reader's own append is involved.
func (s *listScan) branches(lf *ListFacts, k KeyID, rs []listRead, onlyInternal bool) []int {
	h := s.h
	var branches []int
	for ri, r := range rs {
		l := h.Lists[r.list]
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
		if len(branches) > 0 && (!onlyInternal || rs[branches[0]].internal || r.internal) {
			o := rs[branches[0]]
			lf.Findings = append(lf.Findings, ListFinding{Kind: IncompatibleOrder, Key: k,
				Txns: []TxnID{o.t, r.t}, Ops: []int32{o.op, r.op}, Value: -1,
				At: firstDiff(h.Lists[o.list], l), Internal: o.internal || r.internal})
		}
		if len(branches) < maxBranches {
			branches = append(branches, ri)
		}
	}
	return branches
}

// hints appends to out the version orders of the maximal lists of k.
func (s *listScan) hints(out []VersionHint, k KeyID, rs []listRead, branches []int) []VersionHint {
	h := s.h
	clear(s.seen)
	hint := func(x, y ValueID) {
		if x == y {
			return
		}
		if key := pairKey(x, y); !s.seen[key] {
			s.seen[key] = true
			out = append(out, VersionHint{Key: k, Before: x, After: y})
		}
	}
	for _, b := range branches {
		m := h.Lists[rs[b].list]
		// Consecutive elements; across values with several appenders
		// (whose writer is uncertain) also the elements with one appender
		// on either side.
		lastUnique := ValueID(-1)
		for i, v := range m {
			if i > 0 {
				hint(m[i-1], v)
			}
			if s.writers[verOf(s.base, k, v)] <= 1 {
				if lastUnique >= 0 && (i == 0 || m[i-1] != lastUnique) {
					hint(lastUnique, v)
				}
				lastUnique = v
			}
		}
		s.stamp++
		for _, v := range m {
			s.mark[verOf(s.base, k, v)] = s.stamp
		}
		last := m[len(m)-1]
		for v := range ValueID(len(h.Values[k])) {
			if ver := verOf(s.base, k, v); s.appended[ver] > 0 && s.mark[ver] != s.stamp {
				hint(last, v)
				if lastUnique >= 0 && lastUnique != last {
					hint(lastUnique, v)
				}
			}
		}
	}
	return out
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []ValueID) bool {
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

func firstDiff(a, b []ValueID) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// unknownAppenders computes ListFacts.UnknownAppenders.
func unknownAppenders(h *History, base []int32) [][]TxnID {
	nk := len(h.Keys)
	committed := make([]bool, base[nk])
	unknown := map[int32][]TxnID{}
	for t := 1; t < len(h.Txns); t++ {
		tx := &h.Txns[t]
		for _, op := range tx.Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := verOf(base, op.Key, op.Value)
			switch tx.Status {
			case Committed:
				committed[ver] = true
			case Unknown:
				if l := unknown[ver]; len(l) == 0 || l[len(l)-1] != TxnID(t) {
					unknown[ver] = append(l, TxnID(t))
				}
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var out [][]TxnID
	done := map[int32]bool{}
	for t := 1; t < len(h.Txns); t++ {
		if h.Txns[t].Status != Committed {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if op.Kind != OpReadList {
				continue
			}
			for _, v := range h.List(op) {
				ver := verOf(base, op.Key, v)
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

// HintEdge is a version order between the transactions that installed the
// two versions: From's write of Key precedes To's.
type HintEdge struct {
	Key      KeyID
	From, To TxnID
}

// HintEdges turns version hints into orders between their writers. The
// writer of a version is the transaction that wrote it, finally or not (an
// intermediate element of a list stands for its transaction: transactions
// install their writes at once). A hint from version a to version b gives
// A → B when a and b each have exactly one writer, A and B, both included,
// A ≠ B. Writers are counted among the included transactions and the
// unknown-status ones left out alike, so that leaving an unknown
// transaction out never makes another writer unique: it only removes
// orders. A version with several writers (a value appended twice) leaves
// its hints out: those orders stay uncertain. The result is deduplicated,
// in the order of hints.
func (h *History) HintEdges(hints []VersionHint, included func(TxnID) bool) []HintEdge {
	if len(hints) == 0 {
		return nil
	}
	ix := h.Index()
	const none, many TxnID = -1, -2
	writer := make([]TxnID, ix.NumVersions())
	for i := range writer {
		writer[i] = none
	}
	for t := range h.Txns {
		if h.Txns[t].Status != Unknown && !included(TxnID(t)) {
			continue
		}
		for _, op := range h.Txns[t].Ops {
			if !op.Kind.IsWrite() {
				continue
			}
			ver := ix.Ver(op.Key, op.Value)
			switch w := writer[ver]; {
			case w == none:
				writer[ver] = TxnID(t)
			case w != TxnID(t):
				writer[ver] = many
			}
		}
	}
	seen := map[HintEdge]bool{}
	var out []HintEdge
	for _, vh := range hints {
		a, b := writer[ix.Ver(vh.Key, vh.Before)], writer[ix.Ver(vh.Key, vh.After)]
		if a < 0 || b < 0 || a == b || !included(a) || !included(b) {
			continue
		}
		e := HintEdge{Key: vh.Key, From: a, To: b}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
