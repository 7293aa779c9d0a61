package weak

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// clockPruneRounds bounds the rounds of pruneByClocks.
const clockPruneRounds = 16

// maxClockBytes bounds the clocks pruneByClocks builds at RC and RA (CC
// needs them anyway).
const maxClockBytes = 1 << 30

// pruneByClocks drops the candidate writers that the certain so ∪ wr
// alone rules out, in time and memory linear in the history times the
// number of sessions, where prune's reachability matrices are quadratic.
// It uses the happens-before clocks of the certain part (the reads with one
// writer left): choosing w for a read of x in t adds w → t, so w is dropped
// if t happens before w; and it forces t2 → w for every other writer t2 of
// x that the level's premise certainly relates to t, so w is dropped if w
// happens before such a t2 (w is overwritten by a write the reader
// certainly sees). so ∪ wr ⊆ co′ and premises only grow with wr, so a
// dropped candidate is in no acyclic choice. A read left with one
// candidate is certain in the next round. Like prune, a read keeps its
// candidates when all would go, and the certain part being cyclic stops it.
// Only transactions taken as committed are judged: an optional reader or
// writer (unknown.go) keeps its candidates. It also records in likely the
// latest candidate (in happens-before) that is in the reader's past:
// reading from it adds no causality, the search's best first guess.
func (c *checker) pruneByClocks() (pruned int, err error) {
	if c.level != history.CC && int64(c.n)*int64(len(c.sess))*4 > maxClockBytes {
		return 0, nil
	}
	if c.level != history.CC {
		c.buildWriteKeys()
	}
	kw := c.writersByKey()
	var prem []history.TxnID
	pos := make([]int32, c.n)
	for round := 0; round < clockPruneRounds; round++ {
		c.clockRounds++
		c.certainEvents()
		g := c.buildGraph(false)
		order, ok := g.topo(c)
		if !ok {
			return pruned, nil
		}
		if err := c.clocks(order); err != nil {
			return pruned, err
		}
		for i, t := range order {
			pos[t] = int32(i)
		}
		k := c.k
		// before reports whether a happens before b in the certain part;
		// the order rules most pairs out without reading b's clock.
		before := func(a, b history.TxnID) bool {
			switch {
			case b == history.InitTxn:
				return false
			case a == history.InitTxn:
				return true
			case pos[a] > pos[b]:
				return false
			}
			return c.hb[int(b)*k+int(c.loc[a].sess)] >= c.loc[a].idx
		}
		newSingles := false
		for i := range c.amb {
			if i&1023 == 0 {
				if err := c.ctx.Err(); err != nil {
					return pruned, err
				}
			}
			a := &c.amb[i]
			t := a.txn
			if len(a.cands) < 2 || !c.in[t] {
				continue
			}
			prem = c.premiseWriters(prem[:0], kw, t, a.key, a.op)
			kept := a.cands[:0:0]
			for _, w := range a.cands {
				if !c.in[w] {
					kept = append(kept, w)
					continue
				}
				if before(w, t) && (c.likely[i] < 0 || before(c.likely[i], w)) {
					c.likely[i] = w
				}
				bad := w != history.InitTxn && before(t, w)
				for _, p := range prem {
					if bad {
						break
					}
					bad = p != w && before(w, p)
				}
				if !bad {
					kept = append(kept, w)
				}
			}
			n, single := a.narrow(kept)
			pruned += n
			newSingles = newSingles || single
		}
		if !newSingles {
			break
		}
	}
	return pruned, nil
}

// keyWriters indexes the writers taken (T⊥ aside) of each key by session:
// runs[runLo[x]:runLo[x+1]] are the sessions that write x, each with its
// writers wtx[lo:hi] in session order, with their Txn.Index in widx.
type keyWriters struct {
	runLo []int32
	runs  []wrun
	wtx   []history.TxnID
	widx  []int32
}

type wrun struct{ sess, lo, hi int32 }

// writersByKey returns the keyWriters of the transactions taken, built
// once: choose changes c.in only after the pruning and the theory's
// premises, which use it.
func (c *checker) writersByKey() *keyWriters {
	if c.kw == nil {
		c.kw = c.keyWriters()
	}
	return c.kw
}

func (c *checker) keyWriters() *keyWriters {
	nk := c.h.NumKeys()
	kw := &keyWriters{runLo: make([]int32, nk+1)}
	count := make([]int32, nk+1)
	last := make([]int32, nk) // == s+1: the key's last run is of session s
	for s, txs := range c.sess {
		for _, t := range txs {
			for _, w := range c.ix.Writes(t) {
				count[w.Key+1]++
				if last[w.Key] != int32(s+1) {
					last[w.Key] = int32(s + 1)
					kw.runLo[w.Key+1]++
				}
			}
		}
	}
	for x := range nk {
		count[x+1] += count[x]
		kw.runLo[x+1] += kw.runLo[x]
	}
	kw.runs = make([]wrun, kw.runLo[nk])
	kw.wtx = make([]history.TxnID, count[nk])
	kw.widx = make([]int32, count[nk])
	fillR := slices.Clone(kw.runLo[:nk])
	clear(last)
	for s, txs := range c.sess {
		for _, t := range txs {
			for _, w := range c.ix.Writes(t) {
				x := w.Key
				if last[x] != int32(s+1) {
					last[x] = int32(s + 1)
					kw.runs[fillR[x]] = wrun{sess: int32(s), lo: count[x], hi: count[x]}
					fillR[x]++
				}
				kw.wtx[count[x]], kw.widx[count[x]] = t, c.h.Txns[t].Index
				count[x]++
				kw.runs[fillR[x]-1].hi++
			}
		}
	}
	return kw
}

// latest returns the last writer of x in session s with index at most
// bound, or -1.
func (kw *keyWriters) latest(x history.KeyID, s, bound int32) history.TxnID {
	runs := kw.runs[kw.runLo[x]:kw.runLo[x+1]]
	r, ok := slices.BinarySearchFunc(runs, s, func(r wrun, s int32) int { return int(r.sess - s) })
	if !ok {
		return -1
	}
	return kw.latestIn(runs[r], bound)
}

// latestIn returns the last writer of run r with index at most bound, or -1.
func (kw *keyWriters) latestIn(r wrun, bound int32) history.TxnID {
	j, _ := slices.BinarySearch(kw.widx[r.lo:r.hi], bound+1)
	if j == 0 {
		return -1
	}
	return kw.wtx[int(r.lo)+j-1]
}

// premiseWriters appends to dst the writers of x that the level's premise certainly
// relates to t for its read of x at op, or for each session the latest
// such when session order orders the others before it (which is all a
// happens-before test needs): CC the writers that happen before t; RA its
// latest session predecessor writing x and the writers t read from; RC the
// writers t read from at a program point before op's. c.hb must be current.
func (c *checker) premiseWriters(dst []history.TxnID, kw *keyWriters, t history.TxnID, x history.KeyID, op int32) []history.TxnID {
	h := c.h
	add := func(w history.TxnID) {
		if w > history.InitTxn && w != t && !slices.Contains(dst, w) {
			dst = append(dst, w)
		}
	}
	switch c.level {
	case history.CC:
		row := c.hb[int(t)*c.k : int(t)*c.k+c.k]
		for _, r := range kw.runs[kw.runLo[x]:kw.runLo[x+1]] {
			if b := row[r.sess]; b >= 0 {
				add(kw.latestIn(r, b))
			}
		}
	case history.RA:
		tt := &h.Txns[t]
		add(kw.latest(x, tt.Session, tt.Index-1))
		for _, e := range c.events(t) {
			if e.writer != history.InitTxn && c.writes(e.writer, x) {
				add(e.writer)
			}
		}
	case history.RC:
		at := c.point(t, op)
		for _, e := range c.events(t) {
			if c.point(t, e.op) < at && e.writer != history.InitTxn && c.writes(e.writer, x) {
				add(e.writer)
			}
		}
	}
	return dst
}
