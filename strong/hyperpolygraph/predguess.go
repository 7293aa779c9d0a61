package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// predChoices picks, for ResolveInOrder, the version each uncertain read
// of a row a predicate read did not return (Read.Pred) observes: the
// oldest candidate that is no older than what the reader's reads at
// earlier program points saw of the key (the rule of reads that never go
// back), where the latest one would make the reader see, for the reads
// after it, every transaction before it: a phantom leaves it seeing less.
// Item reads keep their latest candidate before the reader. It returns
// the choice per WR set (-1: none, the caller falls back), or nil when no
// read is such a row.
func (g *Graph) predChoices(rank []int32) []history.TxnID {
	if len(g.WR) == 0 || !slices.ContainsFunc(g.Reads, func(rs []Read) bool { return slices.ContainsFunc(rs, func(r Read) bool { return r.Pred }) }) {
		return nil
	}
	h := g.H
	choice := make([]history.TxnID, len(g.WR))
	for i := range choice {
		choice[i] = -1
	}
	// Each reader's reads of a key, in program order: Build lists first
	// reads, NewMixed appends re-reads in program order.
	type tk struct {
		t history.TxnID
		k history.KeyID
	}
	reads := map[tk][]Read{}
	pred := map[history.TxnID]bool{}
	for k, rs := range g.Reads {
		for _, r := range rs {
			reads[tk{r.Reader, history.KeyID(k)}] = append(reads[tk{r.Reader, history.KeyID(k)}], r)
			pred[r.Reader] = pred[r.Reader] || r.Pred
		}
	}
	writes := func(w history.TxnID, k history.KeyID) bool {
		_, ok := slices.BinarySearch(g.Writers[k], w)
		return ok
	}
	for t, has := range pred {
		if !has {
			continue
		}
		seen := map[history.TxnID]bool{} // writers observed at earlier points
		var point []history.TxnID        // observed at the current point
		cur := map[history.KeyID]int{}
		wrote := map[history.KeyID]bool{}
		at := int32(-1)
		for j, op := range h.Txns[t].Ops {
			k := op.Key
			if op.Kind.IsWrite() {
				wrote[k] = true
				continue
			}
			if !op.Kind.IsRead() || wrote[k] {
				continue
			}
			rs := reads[tk{t, k}]
			if cur[k] >= len(rs) {
				continue
			}
			r := rs[cur[k]]
			cur[k]++
			if p := h.ReadPoint(t, int32(j)); p != at {
				for _, w := range point {
					seen[w] = true
				}
				point, at = point[:0], p
			}
			w := r.Writer
			if r.Set >= 0 {
				cands := g.WR[r.Set].Cands
				w = latestBefore(cands, rank, rank[t])
				if r.Pred {
					low := int32(-1)
					for _, s := range g.Writers[k] {
						if seen[s] && rank[s] > low {
							low = rank[s]
						}
					}
					best := history.TxnID(-1)
					for _, c := range cands {
						if rank[c] >= low && rank[c] < rank[t] && (best < 0 || rank[c] < rank[best]) {
							best = c
						}
					}
					if best >= 0 {
						w = best
					}
				}
				choice[r.Set] = w
			}
			if w >= 0 && writes(w, k) {
				point = append(point, w)
			}
		}
	}
	return choice
}
