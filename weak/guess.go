package weak

import (
	"slices"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
)

// The first guess of a writer for each read with several candidates: the
// latest candidate before the reader in a topological order of the certain
// part, probed before any search.

// probe tries the first guesses before any pruning, which costs time and
// memory in proportion to all the candidates (tens per read in large
// histories with few distinct values): it orders the certain so ∪ wr
// (saturating the certain co′ first would cost a saturation more and
// changes the guesses little), guesses, and saturates the guess. If that
// is acyclic the
// level holds and probe fills res; otherwise it reports false and choose
// starts afresh. The optional unknown-status transactions are left to
// choose, which would have to undo their inclusion.
func (c *checker) probe(res *Result) (bool, error) {
	t0 := time.Now()
	defer func() { res.Timings["choose_probe"] = time.Since(t0) }()
	c.certainEvents()
	order, ok := c.buildGraph(false).topoStable(c)
	if !ok {
		return false, nil
	}
	ch := &chooser{c: c, pos: c.positions(order), choice: make([]int32, len(c.amb))}
	for i := range ch.choice {
		ch.choice[i] = -1
	}
	c.snapshotGuess(ch)
	for i, a := range c.amb {
		if ch.choice[i] < 0 {
			if ch.byPos == nil {
				ch.byPos = newVersionsByPos(c, ch.pos)
			}
			ch.choice[i] = int32(ch.preferred(i, a))
		}
	}
	ch.byPos = nil
	viol, _, err := ch.saturate(1)
	if err != nil || len(viol) > 0 {
		return false, err
	}
	res.Verdict = verdict.Satisfied
	res.Chosen = ch.chosen(nil)
	res.Counters["choice_probe"] = 1
	res.Counters["choice_models"] = 1
	return true, nil
}

// snapshotGuess makes the first guesses so that each transaction reads
// all its repeated values at one point of ch.pos, with its reads of a
// single candidate (history.Snapshots): the latest candidate read by read
// can see a version yet miss an older write of the same snapshot. A
// transaction whose reads hold at no one point is left to preferred.
func (c *checker) snapshotGuess(ch *chooser) {
	writers := make([][]history.TxnID, len(c.h.Keys))
	for t := range c.n {
		if c.in[t] {
			for _, w := range c.ix.Writes(history.TxnID(t)) {
				writers[w.Key] = append(writers[w.Key], history.TxnID(t))
			}
		}
	}
	snap := history.NewSnapshots(ch.pos, len(writers), func(k history.KeyID) []history.TxnID { return writers[k] })
	var reads []history.SnapshotRead
	var pick []history.TxnID
	for i := 0; i < len(c.amb); {
		t := c.amb[i].txn
		j := i
		for j < len(c.amb) && c.amb[j].txn == t {
			j++
		}
		reads = reads[:0]
		for _, e := range c.events(t) {
			if e.writer >= 0 {
				reads = append(reads, history.SnapshotRead{Key: e.key, Cands: []history.TxnID{e.writer}})
			}
		}
		certain := len(reads)
		for _, a := range c.amb[i:j] {
			reads = append(reads, history.SnapshotRead{Key: a.key, Cands: a.cands})
		}
		pick = slices.Grow(pick[:0], len(reads))[:len(reads)]
		if snap.Choose(t, reads, pick) {
			for m := i; m < j; m++ {
				if k, ok := slices.BinarySearch(c.amb[m].cands, pick[certain+m-i]); ok {
					ch.choice[m] = int32(k)
				}
			}
		}
		i = j
	}
}

// positions returns each transaction's position in order, the others
// placed after all of them.
func (c *checker) positions(order []history.TxnID) []int32 {
	pos := make([]int32, c.n)
	placed := make([]bool, c.n)
	for i, t := range order {
		pos[t], placed[t] = int32(i), true
	}
	next := int32(len(order))
	for t := range c.n {
		if !placed[t] {
			pos[t] = next
			next++
		}
	}
	return pos
}

// preferred guesses the writer read i most likely saw: the latest
// candidate before the reader in pos, a topological order of the certain
// part (the one closest to the file's order), since the latest
// version is what a read usually returns and every edge its choice forces
// towards it then agrees with that order; else one in its causal past
// (pruning finds them), else its latest session predecessor among the
// candidates, else (with real time) the candidate that ended last before
// the reader started, else the latest candidate before the reader in the
// file.
func (ch *chooser) preferred(i int, a ambRead) int {
	if ids := ch.pos; ids != nil {
		if w := ch.byPos.latestBefore(ch.c.ix, a, ids); w >= 0 {
			if j, ok := slices.BinarySearch(a.cands, w); ok {
				return j
			}
		}
		best, bestPos := -1, int32(-1)
		for j, w := range a.cands {
			if p := ids[w]; p < ids[a.txn] && p > bestPos {
				best, bestPos = j, p
			}
		}
		if best >= 0 {
			return best
		}
	}
	if ch.c.likely != nil && ch.c.likely[i] >= 0 {
		if j := slices.Index(a.cands, ch.c.likely[i]); j >= 0 {
			return j
		}
	}
	h := ch.c.h
	rt := &h.Txns[a.txn]
	best, bestIdx := -1, int32(-1)
	for j, w := range a.cands {
		if w != history.InitTxn && h.Txns[w].Session == rt.Session && h.Txns[w].Index < rt.Index && h.Txns[w].Index > bestIdx {
			best, bestIdx = j, h.Txns[w].Index
		}
	}
	if best >= 0 {
		return best
	}
	if rt.Timed {
		var bestEnd int64
		for j, w := range a.cands {
			if wt := &h.Txns[w]; w != history.InitTxn && wt.Timed && wt.End <= rt.Start && (best < 0 || wt.End > bestEnd) {
				best, bestEnd = j, wt.End
			}
		}
		if best >= 0 {
			return best
		}
	}
	for j, w := range a.cands {
		if w < a.txn {
			best = j
		}
	}
	return max(best, 0)
}

// versionsByPos lists the writers of each version that ambiguous reads
// read, sorted by position (chooser.pos), so that the latest one
// before a reader is a binary search rather than a pass over its
// candidates (tens per read in large histories with few distinct values,
// where every version has many writers).
type versionsByPos struct {
	// at[ver] is k+1 when version ver has the k-th list (0: none), its
	// writers ws[lo[k]:lo[k+1]] with their positions pos[lo[k]:lo[k+1]].
	at  []int32
	lo  []int32
	ws  []history.TxnID
	pos []int32
}

func newVersionsByPos(c *checker, ids []int32) *versionsByPos {
	vb := &versionsByPos{at: make([]int32, c.ix.VerBase[len(c.ix.VerBase)-1]), lo: []int32{0}}
	for _, a := range c.amb {
		ver := c.ix.VerBase[a.key] + int32(a.value)
		if vb.at[ver] != 0 {
			continue
		}
		ws := c.ix.Writers(a.key, a.value)
		start := len(vb.ws)
		vb.ws = append(vb.ws, ws...)
		list := vb.ws[start:]
		slices.SortFunc(list, func(u, v history.TxnID) int { return int(ids[u] - ids[v]) })
		for _, w := range list {
			vb.pos = append(vb.pos, ids[w])
		}
		vb.lo = append(vb.lo, int32(len(vb.ws)))
		vb.at[ver] = int32(len(vb.lo) - 1)
	}
	return vb
}

// latestBefore returns the writer of the version read by a with the
// largest position below the reader's, or -1.
func (vb *versionsByPos) latestBefore(ix *history.Index, a ambRead, ids []int32) history.TxnID {
	if vb == nil {
		return -1
	}
	k := vb.at[ix.VerBase[a.key]+int32(a.value)] - 1
	if k < 0 {
		return -1
	}
	lo, hi := vb.lo[k], vb.lo[k+1]
	j, _ := slices.BinarySearch(vb.pos[lo:hi], ids[a.txn])
	if j == 0 {
		return -1
	}
	return vb.ws[int(lo)+j-1]
}
