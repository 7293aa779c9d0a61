package history

import (
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
	// verFlags records, per version, who else wrote it.
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

func buildIndex(h *History) *Index {
	nk := len(h.Keys)
	ix := &Index{VerBase: make([]int32, nk+1)}
	for k := range nk {
		ix.VerBase[k+1] = ix.VerBase[k] + int32(len(h.Values[k]))
	}
	nv := int(ix.VerBase[nk])
	ix.verFlags = make([]uint8, nv)
	nt := len(h.Txns)
	ix.writeStart = make([]int32, nt+1)
	ix.readStart = make([]int32, nt+1)

	// stamp[k] == t+1 means key k was touched by txn t; last[k] is the op index
	// of t's last write of k (-1: only read so far).
	stamp := make([]int32, nk)
	last := make([]int32, nk)
	counts := make([]int32, nv+1)
	var touched []KeyID
	for t := range h.Txns {
		tx := &h.Txns[t]
		touched = touched[:0]
		for i, op := range tx.Ops {
			k := op.Key
			if stamp[k] != int32(t+1) {
				stamp[k] = int32(t + 1)
				last[k] = -1
				touched = append(touched, k)
				if op.Kind.IsRead() {
					ix.reads = append(ix.reads, ExtRead{Key: k, Value: op.Value, Op: int32(i)})
				}
			}
			if op.Kind.IsWrite() {
				if last[k] >= 0 && tx.Status != Aborted {
					prev := tx.Ops[last[k]]
					ix.verFlags[verOf(ix.VerBase, k, prev.Value)] |= flagIntermediate
				}
				last[k] = int32(i)
			}
		}
		for _, k := range touched {
			if last[k] < 0 {
				continue
			}
			v := tx.Ops[last[k]].Value
			ver := verOf(ix.VerBase, k, v)
			if tx.Status == Aborted {
				ix.verFlags[ver] |= flagAborted
				continue
			}
			ix.writes = append(ix.writes, Version{k, v})
			counts[ver+1]++
		}
		if tx.Status == Aborted {
			// Non-final writes of an aborted transaction are aborted too.
			for _, op := range tx.Ops {
				if op.Kind.IsWrite() {
					ix.verFlags[verOf(ix.VerBase, op.Key, op.Value)] |= flagAborted
				}
			}
		}
		ix.writeStart[t+1] = int32(len(ix.writes))
		ix.readStart[t+1] = int32(len(ix.reads))
	}
	for _, w := range h.AbortedWrites {
		ix.verFlags[verOf(ix.VerBase, w.Key, w.Value)] |= flagAborted
	}
	for i := 1; i <= nv; i++ {
		counts[i] += counts[i-1]
	}
	ix.writerStart = make([]int32, nv+1)
	copy(ix.writerStart, counts)
	ix.writers = make([]TxnID, counts[nv])
	fill := counts[:nv]
	for t := range h.Txns {
		for _, w := range ix.writes[ix.writeStart[t]:ix.writeStart[t+1]] {
			ver := verOf(ix.VerBase, w.Key, w.Value)
			ix.writers[fill[ver]] = TxnID(t)
			fill[ver]++
		}
	}
	if len(h.OneOf) > 0 {
		ix.addOneOf(h)
	}
	return ix
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
		extra[verOf(ix.VerBase, v.Key, v.Value)] = span{lo, int32(len(ws))}
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
