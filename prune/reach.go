// Reachability of the known graph: the state graph in CSR form, its
// topological order, the bitset rows filled in reverse topological order,
// and the queries pruning and encoding ask of them.

package prune

import (
	"context"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
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
		if !p.filled || !p.r.has(u, v) {
			p.core = append(p.core, stateEdge{u, v, int32(i)})
		}
	}
	switch {
	case p.r.layers == 1:
		add(a, b)
	case e.Rel == hyperpolygraph.RW:
		add(2*a+1, 2*b)
	default:
		add(2*a, 2*b+1) // a1→b1 is inherited
	}
}

// inherits reports whether state u inherits the successors of u-1 (u is
// some v1 of SI).
func (p *pruner) inherits(u int32) bool { return p.r.layers == 2 && u&1 == 1 }

// buildCSR brings the core up to date with g.Known and lays it out by
// source, dropping duplicates.
func (p *pruner) buildCSR() {
	for i := p.seen; i < len(p.g.Known); i++ {
		p.addCore(i)
	}
	p.seen = len(p.g.Known)
	m := p.m
	p.off = slices.Grow(p.off[:0], m+1)[:m+1]
	clear(p.off)
	for _, se := range p.core {
		p.off[se.u+1]++
	}
	for i := 1; i <= m; i++ {
		p.off[i] += p.off[i-1]
	}
	n := len(p.core)
	p.dst = slices.Grow(p.dst[:0], n)[:n]
	p.edge = slices.Grow(p.edge[:0], n)[:n]
	fill := make([]int32, m)
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
}

// topoSort computes order and rank, or returns a cycle of known edges.
func (p *pruner) topoSort() []hyperpolygraph.Edge {
	m := p.m
	indeg := make([]int32, m)
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

// fillReach computes the rows in reverse topological order: a row is its
// own state plus the rows of its successors, one word-parallel OR each. A
// successor already in the row is implied by an earlier one (they come in
// topological order), so its edge leaves the core. It stops early, leaving
// the rows unusable, when ctx is done.
func (p *pruner) fillReach(ctx context.Context) error {
	w := p.r.words
	b := p.r.bits
	p.core = p.core[:0]
	p.filled = false
	// ctx is polled every few million words of work: rows are long (a bit
	// per state) when the graph is large.
	work := 0
	for i := len(p.order) - 1; i >= 0; i-- {
		if work += w; work >= 1<<20 {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		u := p.order[i]
		row := b[int(u)*w : int(u+1)*w]
		if p.inherits(u) {
			// v0 comes after v1 in the order, so its row is ready.
			copy(row, b[int(u-1)*w:int(u)*w])
			row[(u-1)>>6] &^= 1 << ((u - 1) & 63)
		} else {
			clear(row)
		}
		row[u>>6] |= 1 << (u & 63)
		for k := p.off[u]; k < p.off[u+1]; k++ {
			v := p.dst[k]
			if row[v>>6]&(1<<(v&63)) != 0 {
				continue
			}
			p.core = append(p.core, stateEdge{u, v, p.edge[k]})
			work += w
			src := b[int(v)*w : int(v+1)*w]
			for j := range row {
				row[j] |= src[j]
			}
		}
	}
	p.filled = true
	return nil
}

// blocked reports whether adding edge from→to (RW or not) closes a cycle
// with the known graph, and through which state edge u→v (v ⇝ u).
func (p *pruner) blocked(from, to history.TxnID, rw bool) (u, v int32, ok bool) {
	a, b := p.r.node[from], p.r.node[to]
	r := &p.r
	switch {
	case r.layers == 1:
		return a, b, r.has(b, a)
	case rw:
		return 2*a + 1, 2 * b, r.has(2*b, 2*a+1)
	case r.has(2*b+1, 2*a):
		return 2 * a, 2*b + 1, true
	default:
		return 2*a + 1, 2*b + 1, r.has(2*b+1, 2*a+1)
	}
}

// Reach is the reachability of a known graph: one bitset row per state.
// It implements encode.Reacher and encode.BitReacher.
type Reach struct {
	layers int
	// node maps a TxnID to its dense node number, -1 when not included;
	// txns is the inverse.
	node []int32
	txns []history.TxnID
	// words per row; row of state s is bits[s*words:(s+1)*words].
	words int
	bits  []uint64
}

func (r *Reach) bytes() int64 { return int64(len(r.txns)*r.layers) * int64(r.words) * 8 }

func (r *Reach) has(from, to int32) bool {
	return r.bits[int(from)*r.words+int(to>>6)]&(1<<(to&63)) != 0
}

// Reaches reports whether to is reachable from from (every node reaches
// itself). For SI this is reachability in the induced SI graph: a path of
// the doubled graph from from's state 0, which can leave only by a non-RW
// edge, to either state of to.
func (r *Reach) Reaches(from, to history.TxnID) bool {
	if from == to {
		return true
	}
	if int(from) >= len(r.node) || int(to) >= len(r.node) || from < 0 || to < 0 {
		return false
	}
	a, b := r.node[from], r.node[to]
	if a < 0 || b < 0 {
		return false
	}
	if r.layers == 1 {
		return r.has(a, b)
	}
	return r.has(2*a, 2*b) || r.has(2*a, 2*b+1)
}

// Layers is 1 for SER and 2 for SI's doubled graph.
func (r *Reach) Layers() int { return r.layers }

// Node returns the dense node number of t, or -1 when t is not included.
// State (t, layer) is Layers()·Node(t)+layer; for SI layer 1 is "entered by
// a non-RW edge" and layer 0 "entered by an RW edge".
func (r *Reach) Node(t history.TxnID) int32 {
	if t < 0 || int(t) >= len(r.node) {
		return -1
	}
	return r.node[t]
}

// Txn returns the transaction of node i.
func (r *Reach) Txn(i int32) history.TxnID { return r.txns[i] }

// Row returns the reachability row of state s: bit j is set iff state j is
// reachable from s. The row aliases the matrix.
func (r *Reach) Row(s int32) []uint64 { return r.bits[int(s)*r.words : int(s+1)*r.words] }
