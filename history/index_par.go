package history

import (
	"math/bits"
	"slices"
	"sync"
)

// indexPart is what a scan of transactions lo to hi finds.
type indexPart struct {
	lo, hi int
	reads  []ExtRead
	writes []Version
	// flags to set once the scan is done: two goroutines setting bits
	// of one version's byte would race.
	flags []verFlag
}

type verFlag struct {
	ver  int32
	flag uint8
}

// scanPart finds p's transactions' external reads and final writes and
// the versions to flag; readStart and writeStart count from p's start.
func (ix *Index) scanPart(h *History, p *indexPart) {
	nk := len(h.Keys)
	// stamp[k] == t+1 means key k was touched by txn t; last[k] is the op
	// index of t's last write of k (-1: only read so far).
	stamp := make([]int32, nk)
	last := make([]int32, nk)
	var touched []KeyID
	for t := p.lo; t < p.hi; t++ {
		tx := &h.Txns[t]
		touched = touched[:0]
		for i, op := range tx.Ops {
			k := op.Key
			if stamp[k] != int32(t+1) {
				stamp[k] = int32(t + 1)
				last[k] = -1
				touched = append(touched, k)
				if op.Kind.IsRead() {
					p.reads = append(p.reads, ExtRead{Key: k, Value: op.Value, Op: int32(i)})
				}
			}
			if op.Kind.IsWrite() {
				if last[k] >= 0 && tx.Status != Aborted {
					prev := tx.Ops[last[k]]
					p.flags = append(p.flags, verFlag{verOf(ix.VerBase, k, prev.Value), flagIntermediate})
				}
				last[k] = int32(i)
			}
		}
		for _, k := range touched {
			if last[k] < 0 {
				continue
			}
			v := tx.Ops[last[k]].Value
			if tx.Status == Aborted {
				p.flags = append(p.flags, verFlag{verOf(ix.VerBase, k, v), flagAborted})
				continue
			}
			p.writes = append(p.writes, Version{k, v})
		}
		if tx.Status == Aborted {
			// Non-final writes of an aborted transaction are aborted too.
			for _, op := range tx.Ops {
				if op.Kind.IsWrite() {
					p.flags = append(p.flags, verFlag{verOf(ix.VerBase, op.Key, op.Value), flagAborted})
				}
			}
		}
		ix.writeStart[t+1] = int32(len(p.writes))
		ix.readStart[t+1] = int32(len(p.reads))
	}
}

// sizes returns how many read and write operations p's transactions have:
// bounds on its external reads and final writes.
func (p *indexPart) sizes(h *History) (reads, writes int) {
	for t := p.lo; t < p.hi; t++ {
		for _, op := range h.Txns[t].Ops {
			if op.Kind.IsRead() {
				reads++
			}
		}
		writes += len(h.Txns[t].Ops)
	}
	return reads, writes - reads
}

// scanParallel is scanPart on two goroutines, each over half of the
// operations. Each lists its findings in its own part of one array, with
// room for as many as it has operations, and the second's are then moved
// down to follow the first's: the lists neither grow step by step nor
// are copied whole.
func (ix *Index) scanParallel(h *History, ops int) {
	m, acc := 0, 0
	for m < len(h.Txns) && acc < ops/2 {
		acc += len(h.Txns[m].Ops)
		m++
	}
	parts := [2]indexPart{{lo: 0, hi: m}, {lo: m, hi: len(h.Txns)}}
	var nr, nw [2]int
	both(func(i int) { nr[i], nw[i] = parts[i].sizes(h) })
	reads := make([]ExtRead, nr[0]+nr[1])
	writes := make([]Version, nw[0]+nw[1])
	parts[0].reads, parts[0].writes = reads[:0:nr[0]], writes[:0:nw[0]]
	parts[1].reads, parts[1].writes = reads[nr[0]:nr[0]], writes[nw[0]:nw[0]]
	both(func(i int) { ix.scanPart(h, &parts[i]) })
	p0, p1 := &parts[0], &parts[1]
	ix.reads = append(reads[:len(p0.reads)], p1.reads...)
	ix.writes = append(writes[:len(p0.writes)], p1.writes...)
	for t := p1.lo; t < p1.hi; t++ {
		ix.readStart[t+1] += int32(len(p0.reads))
		ix.writeStart[t+1] += int32(len(p0.writes))
	}
	ix.setFlags(h, slices.Concat(p0.flags, p1.flags))
}

// placeWriters lists each version's final writers, ascending. The final
// writes, taken in transaction order, are sorted by version with a stable
// radix sort: counting them into place directly costs two cache misses a
// write, on a count array as large as the versions, where each pass of
// the sort reads and writes sequentially.
func (ix *Index) placeWriters() {
	nv := ix.NumVersions()
	vers := make([]int32, len(ix.writes))
	txns := make([]TxnID, len(ix.writes))
	for t := range len(ix.writeStart) - 1 {
		for i := ix.writeStart[t]; i < ix.writeStart[t+1]; i++ {
			w := ix.writes[i]
			vers[i], txns[i] = verOf(ix.VerBase, w.Key, w.Value), TxnID(t)
		}
	}
	vers, txns = radixSort(vers, txns, bits.Len32(uint32(nv)))
	ix.writerStart = make([]int32, nv+1)
	i := 0
	for ver := range nv {
		ix.writerStart[ver] = int32(i)
		for i < len(vers) && vers[i] == int32(ver) {
			i++
		}
		switch int32(i) - ix.writerStart[ver] {
		case 0:
		case 1:
			ix.verFlags[ver] |= flagWritten
		default:
			ix.verFlags[ver] |= flagWritten | flagShared
		}
	}
	ix.writerStart[nv] = int32(i)
	ix.writers = txns
}

// radixSort sorts keys, below 1<<width, and vals with them, stably; it
// returns the sorted slices, which may be keys and vals or new ones.
func radixSort(keys []int32, vals []TxnID, width int) ([]int32, []TxnID) {
	if len(keys) < 2 || width == 0 {
		return keys, vals
	}
	// Digits of at most radixBits bits, as even as can be: a pass
	// scatters to 1<<digit places, each written sequentially.
	passes := (width + radixBits - 1) / radixBits
	digit := (width + passes - 1) / passes
	mask := int32(1)<<digit - 1
	k2, v2 := make([]int32, len(keys)), make([]TxnID, len(vals))
	count := make([]int, 1<<digit)
	for p := range passes {
		shift := p * digit
		clear(count)
		for _, k := range keys {
			count[k>>shift&mask]++
		}
		at := 0
		for d, n := range count {
			count[d] = at
			at += n
		}
		for i, k := range keys {
			d := k >> shift & mask
			k2[count[d]], v2[count[d]] = k, vals[i]
			count[d]++
		}
		keys, k2, vals, v2 = k2, keys, v2, vals
	}
	return keys, vals
}

// radixBits is the widest digit radixSort uses: 1,024 places to scatter
// to, whose cache lines being filled (keys and values) fit in the L2
// cache.
const radixBits = 10

// both runs f(0) on another goroutine and f(1) on this one, and waits.
func both(f func(int)) {
	var wg sync.WaitGroup
	wg.Go(func() { f(0) })
	f(1)
	wg.Wait()
}
