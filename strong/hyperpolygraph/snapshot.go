package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// snapshotChoices picks, for ResolveInOrder with snapshots and without real
// time, the writer each uncertain read observes so that all the reads of
// one transaction come from one snapshot of the order rank gives
// (history.Snapshots; certain reads count with their one writer).
//
// It returns the choice per WR set (-1: none, the caller falls back), or
// nil when g has no uncertain reads.
func (g *Graph) snapshotChoices(rank []int32) []history.TxnID {
	if len(g.WR) == 0 {
		return nil
	}
	n := g.N()
	snap := history.NewSnapshots(rank, len(g.Writers), func(k history.KeyID) []history.TxnID { return g.Writers[k] })
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
	var reads []history.SnapshotRead
	var pick []history.TxnID
	for t := range n {
		rs := rows[start[t]:start[t+1]]
		if !slices.ContainsFunc(rs, func(r read) bool { return r.rd.Set >= 0 }) {
			continue
		}
		reads = reads[:0]
		for _, r := range rs {
			if r.rd.Set < 0 {
				reads = append(reads, history.SnapshotRead{Key: r.key, Cands: []history.TxnID{r.rd.Writer}})
			} else {
				reads = append(reads, history.SnapshotRead{Key: r.key, Cands: g.WR[r.rd.Set].Cands})
			}
		}
		pick = slices.Grow(pick[:0], len(reads))[:len(reads)]
		if !snap.Choose(history.TxnID(t), reads, pick) {
			continue // no one snapshot: the caller's guess stands
		}
		for i, r := range rs {
			if r.rd.Set >= 0 {
				choice[r.rd.Set] = pick[i]
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
	return history.SnapshotsBytes(len(g.Writers), writers, 0) + 16*reads + 8*int64(g.N()) + 4*int64(len(g.WR))
}
