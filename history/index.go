package history

import (
	"runtime"
	"slices"
	"sync"
)

// ExtRead is an external read: the first read of a key in a transaction
// before any write of that key in the same transaction.
type ExtRead struct {
	Key   KeyID
	Value ValueID
	// Op is the index of the read in the transaction's Ops.
	Op int32
}

// Index holds the per-version and per-transaction facts every checker needs,
// in flat arrays (CSR layout): global version numbers, the final writers of
// each version, and each transaction's final writes and external reads.
type Index struct {
	// VerBase[k] is the global number of version (k, 0); version (k, v) is
	// VerBase[k]+v. len(VerBase) == NumKeys()+1.
	VerBase []int32
	// Writers of version ver (final write of the key in a committed or
	// unknown transaction, or T⊥), ascending: writers[writerStart[ver]:writerStart[ver+1]].
	writerStart []int32
	writers     []TxnID
	// verFlags records, per version, who else wrote it and how many final
	// writers it has, up to two.
	verFlags []uint8
	// Per transaction: final writes and external reads.
	writeStart []int32
	writes     []Version
	readStart  []int32
	reads      []ExtRead
}

const (
	flagAborted      uint8 = 1 << iota // written by an aborted txn or in AbortedWrites
	flagIntermediate                   // a non-final write of a committed/unknown txn
	// The number of final writers, up to two, for the checks that ask
	// whether a read has a writer other than its reader: a byte per
	// version, where Writers costs two loads from larger arrays.
	flagWritten // at least one
	flagShared  // two or more
	// A stand-in of a value test (History.OneOf): its one writer is not
	// found among the reader's own final writes by value, so its list is
	// read.
	flagStandIn
)

// Index returns the history's index, computing it once; it is safe for
// concurrent use.
func (h *History) Index() *Index {
	h.index.once.Do(func() { h.index.ix = buildIndex(h) })
	return h.index.ix
}

// lazyIndex caches a History's Index inside the History, so that it is
// freed with it.
type lazyIndex struct {
	once sync.Once
	ix   *Index
}

// buildIndex scans the transactions for their final writes and external
// reads, on two cores when the history is large enough for a second
// goroutine to pay (parallelIndexOps operations), and then places each
// version's writers.
func buildIndex(h *History) *Index {
	ix := newIndex(h)
	ops := 0
	for t := range h.Txns {
		ops += len(h.Txns[t].Ops)
	}
	if ops < parallelIndexOps || runtime.GOMAXPROCS(0) < 2 {
		p := indexPart{lo: 0, hi: len(h.Txns)}
		r, w := p.sizes(h)
		p.reads, p.writes = make([]ExtRead, 0, r), make([]Version, 0, w)
		ix.scanPart(h, &p)
		ix.reads, ix.writes = p.reads, p.writes
		ix.setFlags(h, p.flags)
	} else {
		ix.scanParallel(h, ops)
	}
	ix.placeWriters()
	if len(h.OneOf) > 0 {
		ix.addOneOf(h)
	}
	return ix
}

// parallelIndexOps is the size from which buildIndex uses two cores; a
// variable so that tests can make it small.
var parallelIndexOps = 1 << 16

// newIndex lays out the version numbering and the per-transaction arrays.
func newIndex(h *History) *Index {
	nk := len(h.Keys)
	ix := &Index{VerBase: make([]int32, nk+1)}
	for k := range nk {
		ix.VerBase[k+1] = ix.VerBase[k] + int32(len(h.Values[k]))
	}
	ix.verFlags = make([]uint8, ix.VerBase[nk])
	ix.writeStart = make([]int32, len(h.Txns)+1)
	ix.readStart = make([]int32, len(h.Txns)+1)
	return ix
}

// setFlags sets the flags the scan found, and marks the recorded aborted
// writes.
func (ix *Index) setFlags(h *History, flags []verFlag) {
	for _, f := range flags {
		ix.verFlags[f.ver] |= f.flag
	}
	for _, w := range h.AbortedWrites {
		ix.verFlags[verOf(ix.VerBase, w.Key, w.Value)] |= flagAborted
	}
}

// addOneOf gives each stand-in version (History.OneOf) the writers of
// all its members, ascending, and their flags.
func (ix *Index) addOneOf(h *History) {
	nv := len(ix.verFlags)
	start := make([]int32, nv+1)
	var ws []TxnID
	for ver := range nv {
		start[ver] = int32(len(ws))
		ws = append(ws, ix.writers[ix.writerStart[ver]:ix.writerStart[ver+1]]...)
	}
	start[nv] = int32(len(ws))
	// Stand-ins after the real versions, each a sorted union.
	type span struct{ lo, hi int32 }
	extra := map[int32]span{}
	for v, members := range h.OneOf {
		lo := int32(len(ws))
		for _, m := range members {
			ver := verOf(ix.VerBase, v.Key, m)
			ws = append(ws, ix.writers[ix.writerStart[ver]:ix.writerStart[ver+1]]...)
			ix.verFlags[verOf(ix.VerBase, v.Key, v.Value)] |= ix.verFlags[ver]
		}
		slices.Sort(ws[lo:])
		ws = append(ws[:lo], slices.Compact(ws[lo:])...)
		sv := verOf(ix.VerBase, v.Key, v.Value)
		extra[sv] = span{lo, int32(len(ws))}
		// The members' counts of writers do not add up by OR.
		f := ix.verFlags[sv]&^(flagWritten|flagShared) | flagStandIn
		switch n := int32(len(ws)) - lo; {
		case n == 1:
			f |= flagWritten
		case n > 1:
			f |= flagWritten | flagShared
		}
		ix.verFlags[sv] = f
	}
	// Lay them out in version order again (CSR).
	out := make([]TxnID, 0, len(ws))
	for ver := range nv {
		ix.writerStart[ver] = int32(len(out))
		if sp, ok := extra[int32(ver)]; ok {
			out = append(out, ws[sp.lo:sp.hi]...)
		} else {
			out = append(out, ws[start[ver]:start[ver+1]]...)
		}
	}
	ix.writerStart[nv] = int32(len(out))
	ix.writers = out
}

// NumVersions returns the number of distinct (key, value) pairs.
func (ix *Index) NumVersions() int { return len(ix.verFlags) }

// Ver returns the global version number of (k, v).
func (ix *Index) Ver(k KeyID, v ValueID) int32 { return verOf(ix.VerBase, k, v) }

// Writers returns the transactions (committed or unknown, or T⊥) whose final
// write of k is v, in ascending TxnID order.
func (ix *Index) Writers(k KeyID, v ValueID) []TxnID {
	ver := verOf(ix.VerBase, k, v)
	return ix.writers[ix.writerStart[ver]:ix.writerStart[ver+1]]
}

// AbortedWriter reports whether (k, v) was written by an aborted transaction
// or is a recorded aborted write.
func (ix *Index) AbortedWriter(k KeyID, v ValueID) bool {
	return ix.verFlags[verOf(ix.VerBase, k, v)]&flagAborted != 0
}

// writersUpTo2 returns how many final writers (k, v) has, up to 2.
func (ix *Index) writersUpTo2(k KeyID, v ValueID) int {
	f := ix.verFlags[verOf(ix.VerBase, k, v)]
	return int(f&flagWritten)>>2 + int(f&flagShared)>>3
}

// IntermediateWriter reports whether (k, v) is a non-final write of some
// committed or unknown transaction.
func (ix *Index) IntermediateWriter(k KeyID, v ValueID) bool {
	return ix.verFlags[verOf(ix.VerBase, k, v)]&flagIntermediate != 0
}

// Writes returns t's final writes (empty for aborted transactions), one per
// key, in the order the keys were first touched.
func (ix *Index) Writes(t TxnID) []Version { return ix.writes[ix.writeStart[t]:ix.writeStart[t+1]] }

// Reads returns t's external reads, one per key at most.
func (ix *Index) Reads(t TxnID) []ExtRead { return ix.reads[ix.readStart[t]:ix.readStart[t+1]] }

// Candidates returns the possible writers of an external read of t: the
// final writers of the version other than t itself. The result aliases the
// index when t is not among them.
func (ix *Index) Candidates(t TxnID, r ExtRead) []TxnID {
	ws := ix.Writers(r.Key, r.Value)
	for i, w := range ws {
		if w == t {
			out := make([]TxnID, 0, len(ws)-1)
			out = append(out, ws[:i]...)
			return append(out, ws[i+1:]...)
		}
	}
	return ws
}

// verOf numbers version (k, v) densely across keys: base is Index.VerBase.
func verOf(base []int32, k KeyID, v ValueID) int32 { return base[k] + int32(v) }

// finalWrites tells whether a transaction's final write of a key is a
// given value, one transaction at a time, from one pass over its
// operations made when first asked: with writersUpTo2, whether a read has
// a writer other than its reader, without the writer lists.
type finalWrites struct {
	h     *History
	t     TxnID
	stamp []int32 // t+1 where val holds t's final write of the key
	val   []ValueID
}

func newFinalWrites(h *History) *finalWrites {
	return &finalWrites{h: h, t: -1, stamp: make([]int32, len(h.Keys)), val: make([]ValueID, len(h.Keys))}
}

// is reports whether t is among the final writers of (k, v): its last
// write of k is v, and it did not abort.
func (f *finalWrites) is(t TxnID, k KeyID, v ValueID) bool {
	tx := &f.h.Txns[t]
	if tx.Status == Aborted {
		return false
	}
	if f.t != t {
		f.t = t
		for _, op := range tx.Ops {
			if op.Kind.IsWrite() {
				f.stamp[op.Key], f.val[op.Key] = int32(t)+1, op.Value
			}
		}
	}
	return f.stamp[k] == int32(t)+1 && f.val[k] == v
}

// hasOtherWriter reports whether (k, v) has a final writer other than t.
func (ix *Index) hasOtherWriter(f *finalWrites, t TxnID, k KeyID, v ValueID) bool {
	switch ix.writersUpTo2(k, v) {
	case 0:
		return false
	case 1:
		return !ix.onlyWriterIs(f, t, k, v)
	}
	return true
}

// onlyWriterIs reports, for a version with one final writer, whether it
// is t.
func (ix *Index) onlyWriterIs(f *finalWrites, t TxnID, k KeyID, v ValueID) bool {
	if ix.verFlags[verOf(ix.VerBase, k, v)]&flagStandIn != 0 {
		return ix.Writers(k, v)[0] == t
	}
	return f.is(t, k, v)
}
