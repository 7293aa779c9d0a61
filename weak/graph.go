package weak

import (
	"github.com/hyperiso/hyperiso/history"
)

// Edge references in the graph: so, wr, an index into checker.inferred,
// or (refWW-i) the version order checker.ww[i]. Every negative reference is
// a fact of the history, not an inference: cycles of facts alone are G0 or
// G1c, found first.
const (
	refSO int32 = -1
	refWR int32 = -2
	refWW int32 = -3
)

// graph is co′ (or so ∪ wr) in compressed adjacency form: the edges out of
// u are to[start[u]:start[u+1]] with ref[…] saying where each comes from.
type graph struct {
	start []int32
	to    []history.TxnID
	ref   []int32
}

// buildGraph builds so ∪ wr, plus the inferred edges if asked: T⊥ before the
// first transaction of each session, each transaction before the next one of
// its session, and each writer before each reader (once per pair).
func (c *checker) buildGraph(inferred bool) *graph {
	g := &graph{start: make([]int32, c.n+1)}
	seen := make([]int32, c.n)
	emit := func(add func(from, to history.TxnID, ref int32), stamp int32) {
		for _, txs := range c.sess {
			prev := history.InitTxn
			for _, t := range txs {
				add(prev, t, refSO)
				prev = t
			}
		}
		for t := history.TxnID(1); int(t) < c.n; t++ {
			if !c.in[t] {
				continue
			}
			for _, e := range c.events(t) {
				if seen[e.writer] != stamp*int32(t+1) {
					seen[e.writer] = stamp * int32(t+1)
					add(e.writer, t, refWR)
				}
			}
		}
		if inferred {
			for i, e := range c.inferred {
				add(e.From, e.To, int32(i))
			}
			for i, e := range c.ww {
				add(e.From, e.To, refWW-int32(i))
			}
		}
	}
	emit(func(from, _ history.TxnID, _ int32) { g.start[from+1]++ }, 1)
	for u := range c.n {
		g.start[u+1] += g.start[u]
	}
	m := g.start[c.n]
	g.to = make([]history.TxnID, m)
	g.ref = make([]int32, m)
	fill := append([]int32(nil), g.start[:c.n]...)
	emit(func(from, to history.TxnID, ref int32) {
		g.to[fill[from]], g.ref[fill[from]] = to, ref
		fill[from]++
	}, -1)
	return g
}

// numEdges returns the number of edges.
func (g *graph) numEdges() int { return len(g.to) }

// topo returns the transactions taken as committed in a topological order
// (Kahn's algorithm) and whether all of them could be ordered, i.e. the
// graph is acyclic.
func (g *graph) topo(c *checker) ([]history.TxnID, bool) {
	indeg := make([]int32, c.n)
	for _, v := range g.to {
		indeg[v]++
	}
	order := make([]history.TxnID, 0, c.nIn)
	for t := range c.n {
		if c.in[t] && indeg[t] == 0 {
			order = append(order, history.TxnID(t))
		}
	}
	for i := 0; i < len(order); i++ {
		u := order[i]
		for _, v := range g.to[g.start[u]:g.start[u+1]] {
			indeg[v]--
			if indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	return order, len(order) == c.nIn
}

// topoStable is topo with ties broken by the order of the file, first
// first (Kahn's algorithm with a heap): among the topological orders, the
// one closest to the order of the file, which often is the order of
// execution. A file listed one session after another has no such order:
// its ties go by how far through its session each transaction is
// (History.EvenProgress).
func (g *graph) topoStable(c *checker) ([]history.TxnID, bool) {
	indeg := make([]int32, c.n)
	for _, v := range g.to {
		indeg[v]++
	}
	// The heap holds ranks; byRank turns one back into its transaction.
	rank, byRank := c.fileRanks()
	order := make([]history.TxnID, 0, c.nIn)
	var q idHeap
	for t := range c.n {
		if c.in[t] && indeg[t] == 0 {
			q.push(history.TxnID(rank[t]))
		}
	}
	for len(q) > 0 {
		u := byRank[q.pop()]
		order = append(order, u)
		for _, v := range g.to[g.start[u]:g.start[u+1]] {
			indeg[v]--
			if indeg[v] == 0 {
				q.push(history.TxnID(rank[v]))
			}
		}
	}
	return order, len(order) == c.nIn
}

// fileRanks is the rank of each transaction in the order topoStable
// follows, and its inverse, computed once: the file's order when it
// interleaves its sessions, else History.EvenProgress.
func (c *checker) fileRanks() (rank []int32, byRank []history.TxnID) {
	if c.ranks == nil {
		if c.h.Interleaved() {
			c.ranks = make([]int32, c.n)
			for t := range c.ranks {
				c.ranks[t] = int32(t)
			}
		} else {
			c.ranks = c.h.EvenProgress()
		}
		c.byRank = make([]history.TxnID, len(c.ranks))
		for t, r := range c.ranks {
			c.byRank[r] = history.TxnID(t)
		}
	}
	return c.ranks, c.byRank
}

// idHeap is a binary min-heap of transactions.
type idHeap []history.TxnID

func (q *idHeap) push(t history.TxnID) {
	h := append(*q, t)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	*q = h
}

func (q *idHeap) pop() history.TxnID {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && h[l] < h[m] {
			m = l
		}
		if r < n && h[r] < h[m] {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// sccs finds the strongly connected components with at least two members
// among the nodes live accepts (Tarjan's algorithm, iteratively), following
// only so and wr edges if zeroOnly. comp[v] is v's component (an index into
// the returned list) or -1 for nodes in no such component.
func (g *graph) sccs(n int, live []bool, zeroOnly bool) (comp []int32, comps [][]history.TxnID) {
	comp = make([]int32, n)
	index := make([]int32, n) // 0: unvisited; else DFS number + 1
	low := make([]int32, n)
	onStack := make([]bool, n)
	for i := range comp {
		comp[i] = -1
	}
	var stack []history.TxnID
	type frame struct {
		v history.TxnID
		e int32
	}
	var call []frame
	next := int32(1)
	for root := range n {
		if !live[root] || index[root] != 0 {
			continue
		}
		call = append(call, frame{history.TxnID(root), g.start[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, history.TxnID(root))
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < g.start[v+1] {
				e := f.e
				f.e++
				w := g.to[e]
				if !live[w] || (zeroOnly && g.ref[e] >= 0) {
					continue
				}
				if index[w] == 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, g.start[w]})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if u := call[len(call)-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] != index[v] {
				continue
			}
			i := len(stack) - 1
			for stack[i] != v {
				i--
			}
			members := stack[i:]
			stack = stack[:i]
			for _, w := range members {
				onStack[w] = false
			}
			if len(members) > 1 {
				id := int32(len(comps))
				comps = append(comps, append([]history.TxnID(nil), members...))
				for _, w := range members {
					comp[w] = id
				}
			}
		}
	}
	return comp, comps
}

// pathFinder finds, inside one component, a path with the fewest inferred
// edges and, among those, the fewest edges (Dijkstra on the pair).
type pathFinder struct {
	g      *graph
	stamp  []int32
	dist   []int64
	parent []int32 // edge index into g.to
	pfrom  []history.TxnID
	round  int32
	heap   []heapItem
	work   int
}

type heapItem struct {
	cost int64
	v    history.TxnID
}

func newPathFinder(g *graph, n int) *pathFinder {
	return &pathFinder{g: g, stamp: make([]int32, n), dist: make([]int64, n), parent: make([]int32, n), pfrom: make([]history.TxnID, n)}
}

// find returns the edges (as indices into g.to, with their sources) of a
// best path from src to dst through nodes of component id of comp, or
// ok = false; zeroOnly restricts it to so and wr edges. Cost counts
// inferred edges in the high half and edges in the low half.
func (p *pathFinder) find(src, dst history.TxnID, comp []int32, id int32, zeroOnly bool) (edges []int32, froms []history.TxnID, cost int64, ok bool) {
	p.round++
	p.heap = p.heap[:0]
	p.stamp[src], p.dist[src], p.parent[src] = p.round, 0, -1
	p.push(heapItem{0, src})
	g := p.g
	for len(p.heap) > 0 {
		it := p.pop()
		u := it.v
		if it.cost != p.dist[u] {
			continue
		}
		if u == dst {
			for v := dst; v != src; v = p.pfrom[v] {
				edges = append(edges, p.parent[v])
				froms = append(froms, p.pfrom[v])
			}
			for i, j := 0, len(edges)-1; i < j; i, j = i+1, j-1 {
				edges[i], edges[j] = edges[j], edges[i]
				froms[i], froms[j] = froms[j], froms[i]
			}
			return edges, froms, it.cost, true
		}
		for e := g.start[u]; e < g.start[u+1]; e++ {
			p.work++
			v := g.to[e]
			if comp[v] != id {
				continue
			}
			w := int64(1)
			if g.ref[e] >= 0 {
				if zeroOnly {
					continue
				}
				w += 1 << 32
			}
			d := it.cost + w
			if p.stamp[v] != p.round || d < p.dist[v] {
				p.stamp[v], p.dist[v], p.parent[v], p.pfrom[v] = p.round, d, e, u
				p.push(heapItem{d, v})
			}
		}
	}
	return nil, nil, 0, false
}

func (p *pathFinder) push(it heapItem) {
	h := append(p.heap, it)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].cost <= it.cost {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = it
	p.heap = h
}

func (p *pathFinder) pop() heapItem {
	h := p.heap
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		if r := l + 1; r < len(h) && h[r].cost < h[l].cost {
			l = r
		}
		if last.cost <= h[l].cost {
			break
		}
		h[i] = h[l]
		i = l
	}
	if len(h) > 0 {
		h[i] = last
	}
	p.heap = h
	return top
}

// edge turns the graph edge at index e out of from into an Edge.
func (c *checker) edge(g *graph, from history.TxnID, e int32) Edge {
	to, ref := g.to[e], g.ref[e]
	switch ref {
	case refSO:
		return Edge{From: from, To: to, Rel: history.SO, Key: -1, Via: -1}
	case refWR:
		ed := Edge{From: from, To: to, Rel: history.WR, Key: -1, Via: -1}
		for _, ev := range c.events(to) {
			if ev.writer == from {
				ed.Key = ev.key
				break
			}
		}
		return ed
	}
	if ref <= refWW {
		return c.ww[refWW-ref]
	}
	return c.inferred[ref]
}

// cycleThrough returns the best cycle that starts with edge e out of u
// (within component id), or nil.
func (c *checker) cycleThrough(g *graph, pf *pathFinder, u history.TxnID, e int32, comp []int32, id int32, zeroOnly bool) ([]Edge, int64) {
	v := g.to[e]
	edges, froms, cost, ok := pf.find(v, u, comp, id, zeroOnly)
	if !ok {
		return nil, 0
	}
	cyc := make([]Edge, 0, len(edges)+1)
	cyc = append(cyc, c.edge(g, u, e))
	for i, pe := range edges {
		cyc = append(cyc, c.edge(g, froms[i], pe))
	}
	if g.ref[e] >= 0 {
		cost += 1<<32 + 1
	} else {
		cost++
	}
	return cyc, cost
}

// liveNodes marks the nodes a topological sort could not order: exactly
// those on or after a cycle.
func (c *checker) liveNodes(g *graph) []bool {
	order, _ := g.topo(c)
	live := make([]bool, c.n)
	for t := range c.n {
		live[t] = c.in[t]
	}
	for _, t := range order {
		live[t] = false
	}
	return live
}

// zeroCycle returns a shortest so ∪ wr cycle of component id of zcomp,
// which holds u.
func (c *checker) zeroCycle(g *graph, pf *pathFinder, zcomp []int32, id int32, u history.TxnID) []Edge {
	for e := g.start[u]; e < g.start[u+1]; e++ {
		if g.ref[e] < 0 && zcomp[g.to[e]] == id {
			if cyc, _ := c.cycleThrough(g, pf, u, e, zcomp, id, true); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}

// causalCycles reports one cycle per component of so ∪ wr (CC stops there).
func (c *checker) causalCycles(g *graph) error {
	live := c.liveNodes(g)
	zcomp, zcomps := g.sccs(c.n, live, true)
	c.nCausalSCCs = len(zcomps)
	pf := newPathFinder(g, c.n)
	for id, members := range zcomps {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if c.maxCycles >= 0 && len(c.causal) >= c.maxCycles {
			c.causalOmitted++
			continue
		}
		if cyc := c.zeroCycle(g, pf, zcomp, int32(id), members[0]); cyc != nil {
			c.causal = append(c.causal, Violation{Kind: G1c, Cycle: cyc})
		}
	}
	return nil
}

// cycles builds co′, and if it is cyclic reports one cycle per component:
// through so ∪ wr alone where the component has such a cycle (one per
// component of so ∪ wr), else with as few inferred edges as found.
func (c *checker) cycles(res *Result, maxCycles int) error {
	g := c.buildGraph(true)
	res.Counters["co_edges"] = int64(g.numEdges())
	if err := c.cyclesOf(g, res, maxCycles); err != nil || len(res.Violations) > 0 || res.CyclesOmitted > 0 {
		return err
	}
	if order, ok := g.topo(c); ok && len(order) > 0 {
		res.Order = order[1:] // T⊥ precedes every transaction: first
	}
	return nil
}

// cyclesOf is cycles on a graph already built.
func (c *checker) cyclesOf(g *graph, res *Result, maxCycles int) error {
	live := c.liveNodes(g)
	any := false
	for _, l := range live {
		if l {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	comp, comps := g.sccs(c.n, live, false)
	zcomp, zcomps := g.sccs(c.n, live, true)
	res.Counters["co_sccs"] = int64(len(comps))
	res.Counters["causal_sccs"] = int64(len(zcomps))
	// zeroIn[i]: the so ∪ wr components inside component i.
	zeroIn := make([][]int32, len(comps))
	for id, members := range zcomps {
		ci := comp[members[0]]
		zeroIn[ci] = append(zeroIn[ci], int32(id))
	}
	pf := newPathFinder(g, c.n)
	report := func(v Violation) {
		if maxCycles >= 0 && len(res.Violations) >= maxCycles {
			res.CyclesOmitted++
			return
		}
		res.Violations = append(res.Violations, v)
	}
	for ci, members := range comps {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if maxCycles >= 0 && len(res.Violations) >= maxCycles {
			res.CyclesOmitted += max(1, len(zeroIn[ci]))
			continue
		}
		if len(zeroIn[ci]) > 0 {
			for _, zi := range zeroIn[ci] {
				if cyc := c.zeroCycle(g, pf, zcomp, zi, zcomps[zi][0]); cyc != nil {
					report(Violation{Kind: classify(cyc), Cycle: cyc})
				}
			}
			continue
		}
		// Try the inferred edges of the component in turn, within a work
		// budget proportional to its size once one cycle is known.
		edgesIn := 0
		for _, u := range members {
			edgesIn += int(g.start[u+1] - g.start[u])
		}
		budget := 4*edgesIn + 1<<15
		pf.work = 0
		var best []Edge
		var bestCost int64
	search:
		for _, u := range members {
			for e := g.start[u]; e < g.start[u+1]; e++ {
				if g.ref[e] < 0 || comp[g.to[e]] != int32(ci) {
					continue
				}
				cyc, cost := c.cycleThrough(g, pf, u, e, comp, int32(ci), false)
				if cyc != nil && (best == nil || cost < bestCost) {
					best, bestCost = cyc, cost
				}
				if best != nil && (bestCost>>32 == 1 || pf.work > budget) {
					break search
				}
			}
		}
		if best != nil {
			report(Violation{Kind: classify(best), Cycle: best})
		}
	}
	return nil
}
