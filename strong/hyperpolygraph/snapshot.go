package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// snapshotChoices picks, for ResolveInOrder with snapshots and without real
// time, the writer each uncertain read observes so that all the reads of
// one transaction come from one snapshot of the order rank gives: in that
// order a key's versions follow their writers' ranks, so a read of (k, v)
// from candidate c holds at the points from c's rank up to the next
// writer of k; the transaction's snapshot must lie in every read's set of
// such intervals (certain reads count with their one writer) and before
// its own rank. The latest point that does is taken, and each uncertain
// read observes the candidate whose version holds there.
//
// Taking, read by read, the latest candidate before the reader instead
// (what serves a serial order) lets one transaction see a version and
// miss an older write of the same snapshot when a value repeats. On a
// million-transaction history with 8 values per key that guess broke at
// one place or another every time, and the whole search ran instead.
//
// It returns the choice per WR set (-1: none, the caller falls back), or
// nil when g has no uncertain reads.
func (g *Graph) snapshotChoices(rank []int32) []history.TxnID {
	if len(g.WR) == 0 {
		return nil
	}
	n := g.N()
	// ranks[base[k]:base[k+1]] are the ranks of key k's writers, ascending.
	base := make([]int32, len(g.Writers)+1)
	for k, ws := range g.Writers {
		base[k+1] = base[k] + int32(len(ws))
	}
	ranks := make([]int32, base[len(g.Writers)])
	for k, ws := range g.Writers {
		r := ranks[base[k]:base[k+1]]
		for i, w := range ws {
			r[i] = rank[w]
		}
		slices.Sort(r)
	}
	// until is the rank of the writer of k that follows rank r (no end:
	// the largest int32).
	until := func(k history.KeyID, r int32) int32 {
		rs := ranks[base[k]:base[k+1]]
		i, found := slices.BinarySearch(rs, r)
		if found {
			i++
		}
		if i < len(rs) {
			return rs[i]
		}
		return 1<<31 - 1
	}
	// The reads of each reader, as rows.
	start := make([]int32, n+1)
	for k := range g.Reads {
		for _, rd := range g.Reads[k] {
			start[rd.Reader+1]++
		}
	}
	for v := range n {
		start[v+1] += start[v]
	}
	type read struct {
		key history.KeyID
		rd  Read
	}
	rows := make([]read, start[n])
	fill := slices.Clone(start[:n])
	for k := range g.Reads {
		for _, rd := range g.Reads[k] {
			rows[fill[rd.Reader]] = read{history.KeyID(k), rd}
			fill[rd.Reader]++
		}
	}
	choice := make([]history.TxnID, len(g.WR))
	for i := range choice {
		choice[i] = -1
	}
	// The points lo ≤ s < hi hold the version of w.
	type span struct {
		lo, hi int32
		w      history.TxnID
	}
	var cur, next, all []span
	var ends []int // ends[i]: where read i's spans end in all
	for t := range n {
		reads := rows[start[t]:start[t+1]]
		if !slices.ContainsFunc(reads, func(r read) bool { return r.rd.Set >= 0 }) {
			continue
		}
		// Each read's spans, sorted, before t's own commit.
		all, ends = all[:0], ends[:0]
		for _, r := range reads {
			from := len(all)
			add := func(w history.TxnID) {
				if lo := rank[w]; lo < rank[t] {
					all = append(all, span{lo, until(r.key, lo), w})
				}
			}
			if r.rd.Set < 0 {
				add(r.rd.Writer)
			} else {
				for _, w := range g.WR[r.rd.Set].Cands {
					add(w)
				}
			}
			slices.SortFunc(all[from:], func(a, b span) int { return int(a.lo) - int(b.lo) })
			ends = append(ends, len(all))
		}
		// Their intersection, each read's spans being disjoint.
		cur = append(cur[:0], span{0, rank[t], -1})
		from := 0
		for _, end := range ends {
			mine := all[from:end]
			from = end
			next = next[:0]
			for i, j := 0, 0; i < len(cur) && j < len(mine); {
				lo, hi := max(cur[i].lo, mine[j].lo), min(cur[i].hi, mine[j].hi)
				if lo < hi {
					next = append(next, span{lo, hi, -1})
				}
				if cur[i].hi < mine[j].hi {
					i++
				} else {
					j++
				}
			}
			cur, next = next, cur
			if len(cur) == 0 {
				break
			}
		}
		if len(cur) == 0 {
			continue // no one snapshot: the caller's guess stands
		}
		s := cur[len(cur)-1].hi - 1
		from = 0
		for i, r := range reads {
			mine := all[from:ends[i]]
			from = ends[i]
			if r.rd.Set < 0 {
				continue
			}
			for _, sp := range mine {
				if sp.lo <= s && s < sp.hi {
					choice[r.rd.Set] = sp.w
					break
				}
			}
		}
	}
	return choice
}

// snapshotChoicesBytes estimates what snapshotChoices allocates.
func (g *Graph) snapshotChoicesBytes() int64 {
	if len(g.WR) == 0 {
		return 0
	}
	var writers, reads int64
	for k, ws := range g.Writers {
		writers += int64(len(ws))
		reads += int64(len(g.Reads[k]))
	}
	return 4*writers + 16*reads + 8*int64(g.N()) + 4*int64(len(g.WR))
}
