// Reachability of the known graph: the state graph in CSR form, its
// topological order, the bitset rows filled in reverse topological order,
// and the queries pruning asks of the known graph. Reach and the chain
// vectors are in chains.go.

package prune

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// stateEdge is an edge of the state graph and the known edge it comes from.
type stateEdge struct{ u, v, e int32 }

// addCore appends the state edges of g.Known[i] that the current
// reachability does not already imply.
func (p *pruner) addCore(i int) {
	e := p.g.Known[i]
	a, b := p.r.node[e.From], p.r.node[e.To]
	if a < 0 || b < 0 {
		return
	}
	add := func(u, v int32) {
		if !p.filled || !p.r.implied(u, v) {
			p.core = append(p.core, stateEdge{u, v, int32(i)})
		}
	}
	// The first arc only: the second of a non-rw edge at SI (a1→b1) is
	// inherited, a1 reaching whatever a0 reaches.
	u, v, _, _, _ := hyperpolygraph.StateArcs(a, b, e.Rel == history.RW, p.r.layers)
	add(u, v)
}

// inherits reports whether state u inherits the successors of u-1 (u is
// some v1 of SI).
func (p *pruner) inherits(u int32) bool { return p.r.layers == 2 && u&1 == 1 }

// buildCSR brings the core up to date with g.Known and lays it out by
// source, dropping duplicates, after asking the budget for what it and
// the topological sort allocate (on the first pass, also for the
// pruner's per-transaction indexes, allocated before).
func (p *pruner) buildCSR() error {
	var err error
	what := fmt.Sprintf("pruning's state graph (%d known edges, %d states)", len(p.g.Known), p.m)
	if p.core, err = growFit(p, p.core, len(p.g.Known)-p.seen, what); err != nil {
		return err
	}
	for i := p.seen; i < len(p.g.Known); i++ {
		p.addCore(i)
	}
	p.seen = len(p.g.Known)
	m := p.m
	n := len(p.core)
	// off, fill, stamp, indeg, order and rank: 6m int32; dst and edge.
	need := p.fixed
	p.fixed = 0
	if cap(p.dst) < n {
		need += 2 * 4 * int64(n)
	}
	if cap(p.off) < m+1 {
		need += 6 * 4 * int64(m+1)
	}
	if need > 0 {
		if err := p.ask(need, what); err != nil {
			return err
		}
	}
	p.off = slices.Grow(p.off[:0], m+1)[:m+1]
	clear(p.off)
	for _, se := range p.core {
		p.off[se.u+1]++
	}
	for i := 1; i <= m; i++ {
		p.off[i] += p.off[i-1]
	}
	p.dst = slices.Grow(p.dst[:0], n)[:n]
	p.edge = slices.Grow(p.edge[:0], n)[:n]
	fill := fitLen(p.fillBuf, m)
	p.fillBuf = fill
	copy(fill, p.off[:m])
	for _, se := range p.core {
		p.dst[fill[se.u]] = se.v
		p.edge[fill[se.u]] = se.e
		fill[se.u]++
	}
	// Drop duplicates in place, keeping the first edge behind each pair.
	if len(p.stamp) < m {
		p.stamp = make([]int32, m)
	}
	clear(p.stamp)
	w := int32(0)
	for u := range m {
		start, end := p.off[u], p.off[u+1]
		p.off[u] = w
		for i := start; i < end; i++ {
			v := p.dst[i]
			if p.stamp[v] == int32(u+1) {
				continue
			}
			p.stamp[v] = int32(u + 1)
			p.dst[w], p.edge[w] = v, p.edge[i]
			w++
		}
	}
	p.off[m] = w
	p.dst, p.edge = p.dst[:w], p.edge[:w]
	return nil
}

// topoSort computes order and rank, or returns a cycle of known edges.
func (p *pruner) topoSort() []hyperpolygraph.Edge {
	m := p.m
	indeg := fitLen(p.indeg, m)
	p.indeg = indeg
	clear(indeg)
	for _, v := range p.dst {
		indeg[v]++
	}
	if p.r.layers == 2 {
		for v := 0; v < m; v += 2 {
			indeg[v]++ // v1 before v0
		}
	}
	p.order = slices.Grow(p.order[:0], m)
	for u := range m {
		if indeg[u] == 0 {
			p.order = append(p.order, int32(u))
		}
	}
	for i := 0; i < len(p.order); i++ {
		u := p.order[i]
		for _, v := range p.dst[p.off[u]:p.off[u+1]] {
			if indeg[v]--; indeg[v] == 0 {
				p.order = append(p.order, v)
			}
		}
		if p.inherits(u) {
			if indeg[u-1]--; indeg[u-1] == 0 {
				p.order = append(p.order, u-1)
			}
		}
	}
	if len(p.order) < m {
		return p.knownCycle(indeg)
	}
	p.rank = slices.Grow(p.rank[:0], m)[:m]
	for i, u := range p.order {
		p.rank[u] = int32(i)
	}
	// Successors in topological order let fillReach skip (and drop) those
	// already reached through an earlier one.
	for u := range m {
		lo, hi := p.off[u], p.off[u+1]
		if hi-lo > 1 {
			p.sortByRank(p.dst[lo:hi], p.edge[lo:hi])
		}
	}
	return nil
}

// sortByRank sorts a successor list (and its edge indexes) by rank.
func (p *pruner) sortByRank(dst, edge []int32) {
	rank := p.rank
	if len(dst) <= 16 {
		for i := 1; i < len(dst); i++ {
			for j := i; j > 0 && rank[dst[j]] < rank[dst[j-1]]; j-- {
				dst[j], dst[j-1] = dst[j-1], dst[j]
				edge[j], edge[j-1] = edge[j-1], edge[j]
			}
		}
		return
	}
	ps := p.keys[:0]
	for i := range dst {
		ps = append(ps, uint64(rank[dst[i]])<<32|uint64(uint32(edge[i])))
	}
	slices.Sort(ps)
	for i, q := range ps {
		dst[i], edge[i] = p.order[q>>32], int32(uint32(q))
	}
	p.keys = ps
}

// fillBits computes the rows in reverse topological order: a row is its
// own state plus the rows of its successors, one word-parallel OR each. A
// successor already in the row is implied by an earlier one (they come in
// topological order), so its edge leaves the core. It stops early, leaving
// the rows unusable, when ctx is done.
//
// When the rows hold the reachability of the previous pass's core, most
// states recompute only the words of their row that may differ (see
// partialRow): after the first passes a pass adds few edges, and though
// they reach into most rows, they change a word or two of each. Each
// state's changed words are kept (dirtyW), and rowChanged says whether any
// is (every state on a full fill): passWW skips the pairs whose writers'
// rows did not change.
func (p *pruner) fillBits(ctx context.Context) error {
	w := p.r.words
	b := p.r.bits
	// After a pass that added many edges most words of most rows change,
	// and a full fill, which neither compares nor tracks words, is cheaper.
	inc := p.rowsValid && incrementalRows && p.addedLast <= max(p.m/16, 64)
	if err := p.growRowScratch(); err != nil {
		return err
	}
	p.core = p.core[:0]
	p.filled, p.rowsValid, p.rowsInc = false, false, false
	scratch := p.rowBuf
	dw := p.dirtyWords
	// ctx is polled every few million words of work: rows are long (a bit
	// per state) when the graph is large.
	work := 0
	for i := len(p.order) - 1; i >= 0; i-- {
		if work += 4; work >= 1<<20 {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		u := p.order[i]
		row := b[int(u)*w : int(u+1)*w]
		if inc {
			if done, cost := p.partialRow(u, row); done {
				work += cost
				continue
			}
		}
		work += w
		next := row
		if inc {
			next = scratch
		}
		if p.inherits(u) {
			// v0 comes after v1 in the order, so its row is ready.
			copy(next, b[int(u-1)*w:int(u)*w])
			next[(u-1)>>6] &^= 1 << ((u - 1) & 63)
		} else {
			clear(next)
		}
		next[u>>6] |= 1 << (u & 63)
		for k := p.off[u]; k < p.off[u+1]; k++ {
			v := p.dst[k]
			if next[v>>6]&(1<<(v&63)) != 0 {
				continue
			}
			p.core = append(p.core, stateEdge{u, v, p.edge[k]})
			work += w
			src := b[int(v)*w : int(v+1)*w]
			for j := range next {
				next[j] |= src[j]
			}
		}
		if inc {
			dm := p.dirtyW[int(u)*dw : int(u+1)*dw]
			clear(dm)
			changed := false
			for j, x := range next {
				if x != row[j] {
					row[j] = x
					dm[j>>6] |= 1 << (j & 63)
					changed = true
				}
			}
			p.rowChanged[u] = changed
		} else {
			p.rowChanged[u] = true
		}
	}
	p.saveCore()
	p.filled, p.rowsValid, p.rowsInc = true, true, inc
	return nil
}

// incrementalRows lets fillBits recompute only the words of a row that may
// have changed; tests turn it off to compare with full fills.
var incrementalRows = true

// keptRows and skippedPairs count, for tests, the rows an incremental fill
// recomputed in part and the pairs passWW skipped.
var keptRows, skippedPairs atomic.Int64

// maxPartialDegree bounds the successors of a state that partialRow
// handles: it finds the core edges by testing each successor against the
// rows of the earlier ones.
const maxPartialDegree = 64

// partialRow brings state u's row, which holds u's reachability by the
// previous core, up to date by recomputing only the words that changed in
// the rows it is made of, when that is exact; it reports whether it did,
// and the work it took. It is exact when every successor v of u was
// reached by u before (the old row holds v's old row: rows are closed)
// and u's previous core edges are all still there: then, word by word,
// the union over the current successors of their old rows is the old row,
// and a word none of them (nor the state u inherits from) changed keeps
// its value. The core edges are those of a full fill: a successor is left
// out when the inherited row or an earlier successor's row holds it.
func (p *pruner) partialRow(u int32, row []uint64) (bool, int) {
	lo, hi := p.off[u], p.off[u+1]
	if hi-lo > maxPartialDegree {
		return false, 0
	}
	for k := lo; k < hi; k++ {
		if v := p.dst[k]; row[v>>6]&(1<<(v&63)) == 0 {
			return false, 0
		}
	}
	if prev := p.prevDst[p.prevOff[u]:p.prevOff[u+1]]; len(prev) > 0 {
		p.markGen++
		for _, v := range prev {
			p.mark[v] = p.markGen
		}
		found := 0
		for k := lo; k < hi; k++ {
			if p.mark[p.dst[k]] == p.markGen {
				found++
			}
		}
		if found < len(prev) {
			return false, 0
		}
	}
	w, dw, b := p.r.words, p.dirtyWords, p.r.bits
	dm := p.dirtyW[int(u)*dw : int(u+1)*dw]
	clear(dm)
	var inh []uint64
	if p.inherits(u) {
		inh = b[int(u-1)*w : int(u)*w]
		for j, x := range p.dirtyW[int(u-1)*dw : int(u)*dw] {
			dm[j] |= x
		}
	}
	first := len(p.core)
	for k := lo; k < hi; k++ {
		v := p.dst[k]
		for j, x := range p.dirtyW[int(v)*dw : int(v+1)*dw] {
			dm[j] |= x
		}
		vw, vb := int(v>>6), uint64(1)<<(v&63)
		implied := inh != nil && v != u-1 && inh[vw]&vb != 0
		for _, se := range p.core[first:] {
			if implied {
				break
			}
			implied = b[int(se.v)*w+vw]&vb != 0
		}
		if !implied {
			p.core = append(p.core, stateEdge{u, v, p.edge[k]})
		}
	}
	core := p.core[first:]
	cost := int(hi-lo) + dw
	changed := false
	for d, mw := range dm {
		for mw != 0 {
			j := d<<6 | bits.TrailingZeros64(mw)
			mw &= mw - 1
			x := uint64(0)
			if j == int(u>>6) {
				x = 1 << (u & 63)
			}
			if inh != nil {
				y := inh[j]
				if j == int((u-1)>>6) {
					y &^= 1 << ((u - 1) & 63)
				}
				x |= y
			}
			for _, se := range core {
				x |= b[int(se.v)*w+j]
			}
			cost += len(core) + 1
			if x != row[j] {
				row[j] = x
				changed = true
			} else {
				dm[d] &^= 1 << (j & 63)
			}
		}
	}
	p.rowChanged[u] = changed
	keptRows.Add(1)
	return true, cost
}

// saveCore records the core's edges by source (prevOff, prevDst), for
// the next fill's partialRow.
func (p *pruner) saveCore() {
	m := p.m
	off := p.prevOff[:m+1]
	clear(off)
	for _, se := range p.core {
		off[se.u+1]++
	}
	for i := 1; i <= m; i++ {
		off[i] += off[i-1]
	}
	p.prevDst = p.prevDst[:len(p.core)]
	fill := p.fillBuf[:m]
	copy(fill, off[:m])
	for _, se := range p.core {
		p.prevDst[fill[se.u]] = se.v
		fill[se.u]++
	}
}

// growRowScratch allocates, after asking the budget, what the incremental
// fill keeps: a scratch row, each state's changed flag, mark and changed
// words (a bit per word of its row), and the previous core by source (as
// long as the current core, which is bounded by the state graph's edges).
func (p *pruner) growRowScratch() error {
	m := p.m
	need := int64(0)
	if p.rowChanged == nil {
		dw := (p.r.words + 63) / 64
		need += int64(p.r.words)*8 + int64(m) + 4*int64(m) + 4*int64(m+1) + 8*int64(m)*int64(dw)
	}
	if cap(p.prevDst) < len(p.dst) {
		need += 4 * int64(len(p.dst))
	}
	if need == 0 {
		return nil
	}
	if err := p.ask(need, fmt.Sprintf("pruning's incremental reachability (%d states)", m)); err != nil {
		return err
	}
	if p.rowChanged == nil {
		p.rowBuf = make([]uint64, p.r.words)
		p.rowChanged = make([]bool, m)
		p.mark = make([]int32, m)
		p.prevOff = make([]int32, m+1)
		p.dirtyWords = (p.r.words + 63) / 64
		p.dirtyW = make([]uint64, m*p.dirtyWords)
	}
	if cap(p.prevDst) < len(p.dst) {
		p.prevDst = make([]int32, 0, len(p.dst))
	}
	return nil
}
