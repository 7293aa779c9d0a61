// Package pk owns the dynamic topological order of the acyclicity theory:
// a directed graph over a fixed set of n nodes whose edges are inserted one
// at a time and removed in LIFO order (as a CDCL solver backtracks), together
// with a topological order of its nodes that every present edge respects.
//
// Insertions follow Pearce and Kelly, "A Dynamic Topological Sort Algorithm
// for Directed Acyclic Graphs" (JEA 2006). An edge u→v that already agrees
// with the order costs O(1). Otherwise the nodes reachable from v below u's
// position (δF) and the nodes reaching u above v's position (δB) are found by
// two searches bounded by the order; if the forward search meets u the edge
// would close a cycle and is refused, and the cycle is reported as the
// caller-supplied reasons of the edges of a path v ⇝ u. The forward search is
// breadth-first, so that path is a shortest one. If the edge is accepted,
// only the nodes of δB ∪ δF move: they are given back their own old
// positions, δB first and δF after, each set keeping its relative order.
// Sorting those positions costs O(k log k) for k = |δB ∪ δF|, or O(k + w/64)
// with a bitmap over the window w = Level(u)-Level(v) when that is cheaper.
// Removing an edge never invalidates the order, so removal does no
// reordering at all.
//
// Edges are kept in a stack; each node has out- and in-lists of (neighbour,
// edge) pairs in insertion order, so the most recently added edge is always
// the last entry of both lists of its endpoints and removing it is O(1).
// A node's position, search stamp, search parent and list headers share one
// 64-byte record, so a search touches one cache line per node it meets.
// Searches reuse stamps, queues and buffers owned by the Graph and do not
// allocate once those have grown to size. A Graph is not safe for
// concurrent use.
package pk

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// arc is an entry of an adjacency list: the node at the other end of the
// edge and the edge's index in Graph.edges.
type arc struct {
	node int32
	edge int32
}

// edge is a present edge from→to labelled with the caller's reason.
type edge struct {
	from, to, reason int32
}

// node is everything a search touches about one node, in one 64-byte
// record so that visiting a node or testing a neighbour costs one cache line
// rather than one per array.
type node struct {
	ord    int32  // position of the node in the order
	mark   uint32 // == Graph.epoch (forward) or epoch+1 (backward): seen by the current search
	parent int32  // edge by which the forward search first reached the node
	_      int32
	out    []arc // edges leaving the node, oldest first
	in     []arc // edges entering the node, oldest first
}

// Graph is a directed acyclic graph over nodes 0..n-1 with a maintained
// topological order. The zero value is an empty graph over no nodes; use New.
type Graph struct {
	nodes []node
	at    []int32 // at[p]: node at position p (inverse of nodes[v].ord)

	edges []edge // present edges, oldest first (the LIFO stack)

	// Search scratch, reused by every call.
	epoch uint32
	stack []int32
	fwd   []int32  // positions of δF
	bwd   []int32  // positions of δB
	moved []int32  // nodes of δB then δF, in their new relative order
	pool  []int32  // sorted old positions of δB ∪ δF
	bits  []uint64 // bitmap over a window of positions, all zero between calls
	path  []int32  // returned cycle / path buffer

	stats Stats
}

// Stats counts what the graph has done since New or the last ResetStats.
type Stats struct {
	Inserted  int64 // edges inserted
	Forward   int64 // insertions that already agreed with the order (O(1))
	Reordered int64 // insertions that needed the bounded searches and a reorder
	Refused   int64 // insertions refused because they would close a cycle
	Moved     int64 // nodes in the reordered regions (|δB ∪ δF| summed)
	Visited   int64 // nodes visited by the bounded searches of AddEdge, both directions
}

// New returns a graph over nodes 0..n-1 with no edges and the identity order.
func New(n int) *Graph {
	if n < 0 || n > math.MaxInt32 {
		panic(fmt.Sprintf("pk: bad node count %d", n))
	}
	// Every scratch list holds at most n entries: size them once so that
	// no search ever allocates.
	scratch := make([]int32, 6*n+1)
	part := func(i int) []int32 { return scratch[i*n : i*n : (i+1)*n] }
	g := &Graph{
		nodes: make([]node, n),
		at:    make([]int32, n),
		bits:  make([]uint64, n/64+1),
		stack: part(0),
		fwd:   part(1),
		bwd:   part(2),
		moved: part(3),
		pool:  part(4),
		path:  scratch[5*n : 5*n : 6*n+1],
	}
	for i := range n {
		g.nodes[i].ord = int32(i)
		g.at[i] = int32(i)
	}
	return g
}

// NumNodes returns n.
func (g *Graph) NumNodes() int { return len(g.nodes) }

// NumEdges returns the number of edges currently present.
func (g *Graph) NumEdges() int { return len(g.edges) }

// Edge returns the i-th present edge in insertion order, 0 ≤ i < NumEdges().
func (g *Graph) Edge(i int) (u, v, reason int32) {
	e := g.edges[i]
	return e.from, e.to, e.reason
}

// Level returns v's current position in the topological order: a value in
// 0..n-1, distinct for distinct nodes, with Level(u) < Level(v) for every
// present edge u→v.
func (g *Graph) Level(v int32) int32 { return g.nodes[v].ord }

// At returns the node at position p of the order (the inverse of Level).
func (g *Graph) At(p int32) int32 { return g.at[p] }

// Order appends the nodes in topological order to dst and returns it.
func (g *Graph) Order(dst []int32) []int32 { return append(dst, g.at...) }

// Stats returns the counters.
func (g *Graph) Stats() Stats { return g.stats }

// ResetStats zeroes the counters.
func (g *Graph) ResetStats() { g.stats = Stats{} }

// AddEdge inserts the edge u→v labelled with reason, an opaque value the
// caller uses to explain the edge. It returns ok=true if the edge was
// inserted. If the edge would close a cycle, nothing changes and ok=false;
// cycle then holds the reasons of the edges of a shortest path v ⇝ u of
// present edges, in path order, which the new edge u→v would close. A self-loop u→u is a
// cycle of that edge alone, so its path is empty (non-nil).
//
// The returned slice is owned by the Graph and is valid only until the next
// call of AddEdge or Path; copy it to keep it.
//
// Parallel edges are allowed: each insertion is a separate edge, removed
// separately by RemoveLast.
func (g *Graph) AddEdge(u, v int32, reason int32) (cycle []int32, ok bool) {
	if u == v {
		g.stats.Refused++
		return g.path[:0], false
	}
	ou, ov := g.nodes[u].ord, g.nodes[v].ord
	if ou < ov {
		g.stats.Forward++
		g.push(u, v, reason)
		return nil, true
	}
	// ov < ou: δF = nodes reachable from v positioned below ou; reaching
	// u itself means v ⇝ u and the edge closes a cycle.
	g.nextEpoch()
	if g.search(v, u, true) {
		g.stats.Refused++
		return g.extract(v, u), false
	}
	g.searchBack(u, ov)
	g.reorder(ov, ou)
	g.stats.Reordered++
	g.push(u, v, reason)
	return nil, true
}

// push appends a present edge; the caller has made sure the order agrees.
func (g *Graph) push(u, v, reason int32) {
	id := int32(len(g.edges))
	g.edges = append(g.edges, edge{from: u, to: v, reason: reason})
	nu := &g.nodes[u]
	nu.out = append(nu.out, arc{node: v, edge: id})
	nv := &g.nodes[v]
	nv.in = append(nv.in, arc{node: u, edge: id})
	g.stats.Inserted++
}

// Reserve makes room for edges more edges and, for each node v, out[v]
// more out-arcs and in[v] more in-arcs (out or in may be nil), in one
// allocation each, so that inserting many edges at once (a large known
// graph) does not grow the stack and every list by repeated copying.
func (g *Graph) Reserve(edges int, out, in []int32) {
	g.edges = slices.Grow(g.edges, edges)
	carve := func(extra []int32, list func(*node) *[]arc) {
		if extra == nil {
			return
		}
		total := 0
		for v := range g.nodes {
			total += len(*list(&g.nodes[v])) + int(extra[v])
		}
		backing := make([]arc, total)
		off := 0
		for v := range g.nodes {
			l := list(&g.nodes[v])
			k := len(*l) + int(extra[v])
			*l = append(backing[off:off:off+k], *l...)
			off += k
		}
	}
	carve(out, func(x *node) *[]arc { return &x.out })
	carve(in, func(x *node) *[]arc { return &x.in })
}

// RemoveLast removes the most recently added edge that is still present.
// It panics if there is none. The order stays valid and is not changed.
func (g *Graph) RemoveLast() {
	i := len(g.edges) - 1
	if i < 0 {
		panic("pk: RemoveLast on a graph with no edges")
	}
	e := g.edges[i]
	g.edges = g.edges[:i]
	nf := &g.nodes[e.from]
	nf.out = nf.out[:len(nf.out)-1]
	nt := &g.nodes[e.to]
	nt.in = nt.in[:len(nt.in)-1]
}

// RemoveTo removes edges in LIFO order until NumEdges() == k. It panics if
// k is negative or greater than NumEdges().
func (g *Graph) RemoveTo(k int) {
	if k < 0 || k > len(g.edges) {
		panic(fmt.Sprintf("pk: RemoveTo(%d) with %d edges", k, len(g.edges)))
	}
	for len(g.edges) > k {
		g.RemoveLast()
	}
}

// Reset removes every edge and restores the identity order, keeping the
// buffers' capacity.
func (g *Graph) Reset() {
	g.RemoveTo(0)
	for i := range g.nodes {
		g.nodes[i].ord = int32(i)
		g.at[i] = int32(i)
	}
}

// Reaches reports whether there is a path u ⇝ v of present edges (true for
// u == v). Adding the edge v→u would close a cycle exactly when Reaches(u, v).
// The search visits only nodes positioned between u and v in the order.
func (g *Graph) Reaches(u, v int32) bool {
	if u == v {
		return true
	}
	if g.nodes[u].ord > g.nodes[v].ord {
		return false
	}
	g.nextEpoch()
	return g.search(u, v, false)
}

// Path returns the reasons of the edges of a shortest path u ⇝ v of present
// edges, in path order, and whether one exists (an empty path for u == v). It is
// the explanation of why the edge v→u would close a cycle. The slice is
// owned by the Graph and valid until the next call of AddEdge or Path.
func (g *Graph) Path(u, v int32) ([]int32, bool) {
	if u == v {
		return g.path[:0], true
	}
	if g.nodes[u].ord > g.nodes[v].ord {
		return nil, false
	}
	g.nextEpoch()
	if !g.search(u, v, false) {
		return nil, false
	}
	return g.extract(u, v), true
}

// nextEpoch starts a new search. The forward search marks with epoch and
// the backward search with epoch+1, so both fit in one array.
func (g *Graph) nextEpoch() {
	if g.epoch >= math.MaxUint32-4 {
		for i := range g.nodes {
			g.nodes[i].mark = 0
		}
		g.epoch = 0
	}
	g.epoch += 2
}

// search runs a breadth-first search from src over out-edges, visiting
// only nodes positioned below dst, and reports whether it reaches dst. Every
// node of a present path src ⇝ dst lies between them in the order, so the
// bound loses nothing. parent records the edge by which each node was first
// reached; breadth-first, the parent chain to dst is a shortest path, which
// keeps the cycles (conflict clauses) short. With collect, the positions of
// the visited nodes (δF) are left in g.fwd; on success the search stops
// early and g.fwd is incomplete.
func (g *Graph) search(src, dst int32, collect bool) bool {
	ep := g.epoch
	nodes := g.nodes
	ub := nodes[dst].ord
	queue := append(g.stack[:0], src)
	nodes[src].mark = ep
	fwd := g.fwd[:0]
	if collect {
		fwd = append(fwd, nodes[src].ord)
	}
	found := false
loop:
	for head := 0; head < len(queue); head++ {
		for _, a := range nodes[queue[head]].out {
			nx := &nodes[a.node]
			o := nx.ord
			if o >= ub {
				if o == ub { // a.node == dst
					nx.parent = a.edge
					found = true
					break loop
				}
				continue
			}
			if nx.mark == ep {
				continue
			}
			nx.mark = ep
			nx.parent = a.edge
			queue = append(queue, a.node)
			if collect {
				fwd = append(fwd, o)
			}
		}
	}
	g.stack, g.fwd = queue, fwd
	if collect {
		g.stats.Visited += int64(len(queue))
	}
	return found
}

// searchBack collects in g.bwd the positions of δB: the nodes that reach
// dst through in-edges and are positioned above lb. It runs after a
// forward search that did not meet dst, so δB and δF are disjoint.
func (g *Graph) searchBack(dst, lb int32) {
	ep := g.epoch + 1
	nodes := g.nodes
	stack := append(g.stack[:0], dst)
	nodes[dst].mark = ep
	bwd := append(g.bwd[:0], nodes[dst].ord)
	for len(stack) > 0 {
		w := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, a := range nodes[w].in {
			nx := &nodes[a.node]
			o := nx.ord
			if o <= lb || nx.mark == ep {
				continue
			}
			nx.mark = ep
			stack = append(stack, a.node)
			bwd = append(bwd, o)
		}
	}
	g.stack, g.bwd = stack, bwd
	g.stats.Visited += int64(len(bwd))
}

// reorder gives the nodes of δB and δF (positions in g.bwd and g.fwd) the
// sorted pool of their old positions: δB first, then δF, each in its old
// relative order. Every other node keeps its position. lo and hi bound the
// affected window: all the positions lie in [lo, hi].
func (g *Graph) reorder(lo, hi int32) {
	bwd, fwd := g.bwd, g.fwd
	k := len(bwd) + len(fwd)
	useBitmap := int(hi-lo)>>bitmapShift <= k*bits.Len(uint(k))
	if forceSort || forceBitmap {
		useBitmap = forceBitmap
	}
	if useBitmap {
		g.reorderBitmap(lo)
	} else {
		g.reorderSort()
	}
	moved, pool := g.moved, g.pool
	for i, x := range moved {
		p := pool[i]
		g.nodes[x].ord = p
		g.at[p] = x
	}
	g.stats.Moved += int64(len(moved))
}

// bitmapShift sets when reorder sorts positions with a bitmap over the
// window instead of a comparison sort: when window/2^bitmapShift words'
// worth of scanning is at most k·log k.
const bitmapShift = 7

// forceSort and forceBitmap let tests exercise one strategy only.
var forceSort, forceBitmap bool

// reorderSort sorts the two position lists and merges them into the pool.
func (g *Graph) reorderSort() {
	bwd, fwd := g.bwd, g.fwd
	slices.Sort(bwd)
	slices.Sort(fwd)
	moved := g.moved[:0]
	for _, p := range bwd {
		moved = append(moved, g.at[p])
	}
	for _, p := range fwd {
		moved = append(moved, g.at[p])
	}
	pool := g.pool[:0]
	i, j := 0, 0
	for i < len(bwd) && j < len(fwd) {
		if bwd[i] < fwd[j] {
			pool = append(pool, bwd[i])
			i++
		} else {
			pool = append(pool, fwd[j])
			j++
		}
	}
	pool = append(pool, bwd[i:]...)
	pool = append(pool, fwd[j:]...)
	g.moved, g.pool = moved, pool
}

// reorderBitmap sorts the positions in O(k + window/64): it sets one bit
// per position relative to lo, then reads the set bits in order, telling
// δB from δF by the backward search's mark. The bitmap is left all zero.
func (g *Graph) reorderBitmap(lo int32) {
	bm := g.bits
	for _, p := range g.bwd {
		q := uint32(p - lo)
		bm[q>>6] |= 1 << (q & 63)
	}
	for _, p := range g.fwd {
		q := uint32(p - lo)
		bm[q>>6] |= 1 << (q & 63)
	}
	nb := len(g.bwd)
	moved := slices.Grow(g.moved[:0], nb+len(g.fwd))[:nb+len(g.fwd)]
	pool := g.pool[:0]
	epB := g.epoch + 1
	b, f := 0, nb
	k := len(moved)
	for w := 0; len(pool) < k; w++ {
		word := bm[w]
		bm[w] = 0
		for word != 0 {
			p := lo + int32(w<<6+bits.TrailingZeros64(word))
			word &= word - 1
			pool = append(pool, p)
			x := g.at[p]
			if g.nodes[x].mark == epB {
				moved[b] = x
				b++
			} else {
				moved[f] = x
				f++
			}
		}
	}
	g.moved, g.pool = moved, pool
}

// extract returns the reasons along the parent edges of the last search,
// from src to dst, in path order.
func (g *Graph) extract(src, dst int32) []int32 {
	path := g.path[:0]
	for x := dst; x != src; {
		e := g.edges[g.nodes[x].parent]
		path = append(path, e.reason)
		x = e.from
	}
	slices.Reverse(path)
	g.path = path
	return path
}
