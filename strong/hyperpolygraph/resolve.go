package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// Assignment resolves every uncertain constraint of a Graph.
type Assignment struct {
	// Forward[i] is true when g.WW[i] is ordered A→B.
	Forward []bool
	// Choice[i] indexes g.WR[i].Cands: the writer the read observed.
	Choice []int32
}

// Prov names the uncertain constraints an edge of a compatible graph
// depends on; -1 where the part is certain.
type Prov struct {
	WW int32 // index into g.WW
	WR int32 // index into g.WR
}

// Compatible is the graph compatible with a hyper-polygraph under one
// Assignment. Version order is kept as a chain per key and each derived RW
// edge points only to the next version: reachability, and so acyclicity,
// is the same as with every edge of the transitive relations.
type Compatible struct {
	G     *Graph
	Edges []Edge
	Prov  []Prov
	// pred[i]: edge i is a predicate anti-dependency (from a Read with
	// Pred); nil when there is none.
	pred []bool
}

// markPred records that the edge just added is a predicate
// anti-dependency.
func (c *Compatible) markPred() {
	n := len(c.Edges)
	if len(c.pred) < n {
		c.pred = append(c.pred, make([]bool, n-len(c.pred))...)
	}
	c.pred[n-1] = true
}

// IsPred reports whether edge i is a predicate anti-dependency: an RW
// edge from a row a predicate read did not return (Read.Pred).
func (c *Compatible) IsPred(i int) bool { return i < len(c.pred) && c.pred[i] }

// Resolve builds the compatible graph of a. Each key's version order is
// its known WW edges and its ordered pairs: every pair of writers is one
// or the other, or a path of known edges (pruning keeps the known part of
// an order as its transitive reduction), so the order is total when it is
// acyclic, and its chain is its only topological order.
func (g *Graph) Resolve(a Assignment) *Compatible {
	c := &Compatible{G: g}
	none := Prov{-1, -1}
	add := func(e Edge, p Prov) {
		c.Edges = append(c.Edges, e)
		c.Prov = append(c.Prov, p)
	}
	type wwEdge struct {
		from, to history.TxnID
		pair     int32
	}
	perKey := make([][]wwEdge, len(g.Writers))
	for _, e := range g.Known {
		switch e.Rel {
		case history.WW:
			perKey[e.Key] = append(perKey[e.Key], wwEdge{e.From, e.To, -1})
		case history.SO, history.WR, history.RT:
			add(e, none)
		}
	}
	for i, p := range g.WW {
		if a.Forward[i] {
			perKey[p.Key] = append(perKey[p.Key], wwEdge{p.A, p.B, int32(i)})
		} else {
			perKey[p.Key] = append(perKey[p.Key], wwEdge{p.B, p.A, int32(i)})
		}
	}
	// next[w] lists the versions that directly follow w's (one, on a
	// chain), with the pair behind each edge.
	type succ struct {
		to   history.TxnID
		pair int32
	}
	next := make(map[history.TxnID][]succ)
	indeg := make(map[history.TxnID]int)
	var queue, order []history.TxnID
	for k, ws := range g.Writers {
		edges := perKey[k]
		clear(next)
		if len(edges) > 0 {
			clear(indeg)
			for _, w := range ws {
				indeg[w] = 0
			}
			for _, e := range edges {
				indeg[e.to]++
				next[e.from] = append(next[e.from], succ{e.to, e.pair})
			}
			// Kahn's sort; the order is a chain when each step has one
			// writer to take.
			queue, order = queue[:0], order[:0]
			for _, w := range ws {
				if indeg[w] == 0 {
					queue = append(queue, w)
				}
			}
			chain := len(queue) <= 1
			for len(queue) > 0 {
				w := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				order = append(order, w)
				for _, s := range next[w] {
					if indeg[s.to]--; indeg[s.to] == 0 {
						queue = append(queue, s.to)
					}
				}
				chain = chain && len(queue) <= 1
			}
			switch {
			case len(order) < len(indeg):
				// A cyclic version order: every edge goes in, the cycle
				// search finds it.
				for _, e := range edges {
					add(Edge{From: e.from, To: e.to, Rel: history.WW, Key: history.KeyID(k)}, Prov{e.pair, -1})
				}
				continue
			case chain:
				// Keep the edge between neighbours (a known one when there
				// is one: it depends on nothing).
				for i := 0; i+1 < len(order); i++ {
					w, best := order[i], succ{-1, -1}
					for _, s := range next[w] {
						if s.to == order[i+1] && (best.to < 0 || s.pair < 0) {
							best = s
						}
					}
					next[w] = append(next[w][:0], best)
					add(Edge{From: w, To: best.to, Rel: history.WW, Key: history.KeyID(k)}, Prov{best.pair, -1})
				}
				if len(order) > 0 {
					delete(next, order[len(order)-1])
				}
			default:
				// Not total (a graph whose pairs do not cover its
				// writers): every edge, each read's RW edges to all
				// direct successors of its version.
				for _, e := range edges {
					add(Edge{From: e.from, To: e.to, Rel: history.WW, Key: history.KeyID(k)}, Prov{e.pair, -1})
				}
			}
		}
		for _, r := range g.Reads[k] {
			w, wrProv := r.Writer, int32(-1)
			if r.Set >= 0 {
				s := g.WR[r.Set]
				w, wrProv = s.Cands[a.Choice[r.Set]], r.Set
				add(Edge{From: w, To: r.Reader, Rel: history.WR, Key: history.KeyID(k)}, Prov{-1, wrProv})
			}
			for _, s := range next[w] {
				if s.to == r.Reader {
					// The reader overwrote the version itself; its own WW
					// edges order it before every later writer.
					continue
				}
				add(Edge{From: r.Reader, To: s.to, Rel: history.RW, Key: history.KeyID(k)}, Prov{s.pair, wrProv})
				if r.Pred {
					c.markPred()
				}
			}
		}
	}
	return c
}

// FindCycles returns up to max cycles, each as indices into c.Edges in path
// order. After a cycle is found, its uncertain edges are set aside so that
// further cycles are different. For SI the search runs on the induced graph
// (every RW edge must follow a non-RW edge).
func (c *Compatible) FindCycles(max int) [][]int {
	si := c.G.Level == history.SI
	return c.findMany(max, func(disabled []bool) []int { return findCycle(c.G.N(), c.Edges, disabled, si) })
}

// findMany calls one for up to max cycles, each found with the uncertain
// edges of the cycles before set aside, so that the cycles differ; a cycle
// of certain edges alone ends the search (no choice avoids it).
func (c *Compatible) findMany(max int, one func(disabled []bool) []int) [][]int {
	disabled := make([]bool, len(c.Edges))
	var out [][]int
	for len(out) < max {
		cyc := one(disabled)
		if cyc == nil {
			break
		}
		out = append(out, cyc)
		certain := true
		for _, i := range cyc {
			if c.Prov[i] != (Prov{-1, -1}) {
				disabled[i] = true
				certain = false
			}
		}
		if certain {
			break
		}
	}
	return out
}

// Order returns a serial order of the included nodes: a topological order
// of all edges of c. ok is false if c has a cycle.
func (c *Compatible) Order() (order []history.TxnID, ok bool) {
	adj := c.adjacency(func(history.Rel) bool { return true })
	return c.topo(adj, csr{})
}

// SnapshotOrder returns, for SI, a commit order of the included nodes and
// each node's snapshot: snap[i] is how many nodes of order (from the start)
// order[i] sees. The order is topological for the non-RW edges and for the
// induced edges a → c of a →(so|wr|ww) b →rw c; a node sees exactly the
// prefix that ends with the last of its direct so/wr/ww predecessors. Every
// predecessor U of T followed by T →rw S orders U before S, so what T read
// is not overwritten inside its snapshot. ok is false if the induced graph
// is cyclic. The induced edges are walked, never stored: there are
// Σ_b |pred(b)|·|rwOut(b)| of them, far more than edges at scale.
func (c *Compatible) SnapshotOrder() (order []history.TxnID, snap []int, ok bool) {
	adj := c.adjacency(func(r history.Rel) bool { return r != history.RW })
	rw := c.adjacency(func(r history.Rel) bool { return r == history.RW })
	order, ok = c.topo(adj, rw)
	if !ok {
		return nil, nil, false
	}
	pos := make([]int32, c.G.N())
	for i, t := range order {
		pos[t] = int32(i)
	}
	snap = make([]int, len(order))
	for _, e := range c.Edges {
		if e.Rel != history.RW {
			i := pos[e.To]
			snap[i] = max(snap[i], int(pos[e.From])+1)
		}
	}
	return order, snap, true
}

// csr is an adjacency in compressed rows: the heads of the arcs out of v
// are to[start[v]:start[v+1]].
type csr struct {
	start []int32
	to    []history.TxnID
}

func (a csr) out(v history.TxnID) []history.TxnID {
	if a.start == nil {
		return nil
	}
	return a.to[a.start[v]:a.start[v+1]]
}

// adjacency is the csr of c's edges whose relation keep accepts, each
// node's arcs in the order of c.Edges.
func (c *Compatible) adjacency(keep func(history.Rel) bool) csr {
	return rowsOf(c.G.N(), c.Edges, keep)
}

// rowsOf is the csr over n nodes of the edges whose relation keep accepts,
// each node's arcs in the order of edges.
func rowsOf(n int, edges []Edge, keep func(history.Rel) bool) csr {
	a := csr{start: make([]int32, n+1)}
	for _, e := range edges {
		if keep(e.Rel) {
			a.start[e.From+1]++
		}
	}
	for v := range n {
		a.start[v+1] += a.start[v]
	}
	a.to = make([]history.TxnID, a.start[n])
	fill := slices.Clone(a.start[:n])
	for _, e := range edges {
		if keep(e.Rel) {
			a.to[fill[e.From]] = e.To
			fill[e.From]++
		}
	}
	return a
}

// topo sorts the included nodes by adj and, when rw is given, by the
// induced arcs a → c of every a → b of adj and b → c of rw (Kahn's
// algorithm, first come first served).
func (c *Compatible) topo(adj, rw csr) (order []history.TxnID, ok bool) {
	n := c.G.N()
	indeg := make([]int32, n)
	for v := range n {
		for _, b := range adj.out(history.TxnID(v)) {
			indeg[b]++
			for _, w := range rw.out(b) {
				indeg[w]++
			}
		}
	}
	cnt := 0
	for v := range n {
		if c.G.Included[v] {
			cnt++
		}
	}
	// order is the queue too: what is taken is never put back.
	order = make([]history.TxnID, 0, cnt)
	for v := range n {
		if c.G.Included[v] && indeg[v] == 0 {
			order = append(order, history.TxnID(v))
		}
	}
	for i := 0; i < len(order); i++ {
		for _, b := range adj.out(order[i]) {
			if indeg[b]--; indeg[b] == 0 {
				order = append(order, b)
			}
			for _, w := range rw.out(b) {
				if indeg[w]--; indeg[w] == 0 {
					order = append(order, w)
				}
			}
		}
	}
	return order, len(order) == cnt
}

// findCycle searches for a cycle with an iterative DFS. With si, node v is
// split into v·2 (arrived by RW, may not take RW) and v·2+1 (may take RW).
func findCycle(n int, edges []Edge, disabled []bool, si bool) []int {
	layers := 1
	if si {
		layers = 2
	}
	nn := layers * n
	// CSR adjacency of the (possibly doubled) graph; each entry is an edge
	// index into edges.
	start := make([]int32, nn+1)
	type arc struct {
		to   int32
		edge int32
	}
	var arcs []arc
	emit := func(fn func(from int32, a arc)) {
		for i, e := range edges {
			if disabled[i] {
				continue
			}
			u1, v1, u2, v2, two := StateArcs(e.From, e.To, e.Rel == history.RW, layers)
			fn(u1, arc{v1, int32(i)})
			if two {
				fn(u2, arc{v2, int32(i)})
			}
		}
	}
	emit(func(from int32, _ arc) { start[from+1]++ })
	for i := 1; i <= nn; i++ {
		start[i] += start[i-1]
	}
	arcs = make([]arc, start[nn])
	fill := slices.Clone(start[:nn])
	emit(func(from int32, a arc) { arcs[fill[from]] = a; fill[from]++ })

	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, nn)
	pos := make([]int32, nn) // next arc to explore
	via := make([]int32, nn) // arc index used to enter the node
	var stack []int32
	for root := range nn {
		if color[root] != white {
			continue
		}
		stack = append(stack[:0], int32(root))
		color[root] = grey
		pos[root] = start[root]
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			if pos[v] == start[v+1] {
				color[v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			ai := pos[v]
			pos[v]++
			w := arcs[ai].to
			switch color[w] {
			case white:
				color[w] = grey
				pos[w] = start[w]
				via[w] = ai
				stack = append(stack, w)
			case grey:
				// Cycle: w ... v -> w along the stack.
				var cyc []int
				for i := len(stack) - 1; stack[i] != w; i-- {
					cyc = append(cyc, int(arcs[via[stack[i]]].edge))
				}
				slices.Reverse(cyc)
				return append(cyc, int(arcs[ai].edge))
			}
		}
	}
	return nil
}
