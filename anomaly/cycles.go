package anomaly

import (
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// maxBestWork bounds BestCycle's breadth-first searches (nodes × edges);
// beyond it only the first stage that finds anything is tried per start.
const maxBestWork = 50_000_000

// BestCycle finds, among edges (a dependency graph over nodes 0..n-1), the
// most specific short cycle the level forbids, the way Elle reports them:
// first a cycle of ww edges (G0), then of ww and wr edges (G1c), then one
// with exactly one rw edge (G-single), then any cycle (at SI: one without
// two adjacent rw edges). Session and real-time order edges may join any of
// them. Within a stage the cycle is a shortest one. The result indexes
// edges in path order; nil when the graph has no such cycle.
func BestCycle(n int, edges []hyperpolygraph.Edge, level history.Level) []int {
	allow := func(rels ...history.Rel) func(hyperpolygraph.Edge) bool {
		return func(e hyperpolygraph.Edge) bool {
			if e.Rel == history.SO || e.Rel == history.RT {
				return true
			}
			for _, r := range rels {
				if e.Rel == r {
					return true
				}
			}
			return false
		}
	}
	if c := shortestCycle(n, edges, allow(history.WW), false); c != nil {
		return c
	}
	nonRW := allow(history.WW, history.WR)
	if c := shortestCycle(n, edges, nonRW, false); c != nil {
		return c
	}
	if c := singleRW(n, edges, nonRW); c != nil {
		return c
	}
	return shortestCycle(n, edges, func(hyperpolygraph.Edge) bool { return true }, level == history.SI)
}

// graph is a CSR adjacency over states: node v is state v, or, with the SI
// split, states 2v (entered by rw: may not leave by rw) and 2v+1.
type graph struct {
	si    bool
	start []int32
	arcs  []arc
}

type arc struct {
	to, edge int32
}

func newGraph(n int, edges []hyperpolygraph.Edge, keep func(hyperpolygraph.Edge) bool, si bool) *graph {
	g := &graph{si: si}
	layers := 1
	if si {
		layers = 2
	}
	ns := layers * n
	g.start = make([]int32, ns+1)
	emit := func(fn func(from int32, a arc)) {
		for i, e := range edges {
			if int(e.From) >= n || int(e.To) >= n || !keep(e) {
				continue
			}
			u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == history.RW, layers)
			fn(u1, arc{v1, int32(i)})
			if two {
				fn(u2, arc{v2, int32(i)})
			}
		}
	}
	emit(func(from int32, _ arc) { g.start[from+1]++ })
	for i := 1; i <= ns; i++ {
		g.start[i] += g.start[i-1]
	}
	g.arcs = make([]arc, g.start[ns])
	fill := append([]int32(nil), g.start[:ns]...)
	emit(func(from int32, a arc) { g.arcs[fill[from]] = a; fill[from]++ })
	return g
}

// bfs returns the edge indices of a shortest path from state src to a
// state accepted by done (at least one edge), or nil.
func (g *graph) bfs(src int32, done func(int32) bool, parent []int32, via []int32, queue []int32) []int {
	for i := range parent {
		parent[i] = -2
	}
	parent[src] = -1
	queue = append(queue[:0], src)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, a := range g.arcs[g.start[u]:g.start[u+1]] {
			if done(a.to) {
				out := []int{int(a.edge)}
				for x := u; parent[x] >= 0; x = parent[x] {
					out = append(out, int(via[x]))
				}
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
				return out
			}
			if parent[a.to] != -2 {
				continue
			}
			parent[a.to], via[a.to] = u, a.edge
			queue = append(queue, a.to)
		}
	}
	return nil
}

// shortestCycle returns a shortest cycle of the kept edges (at SI, of the
// induced graph: no two rw edges in a row, cyclically).
func shortestCycle(n int, edges []hyperpolygraph.Edge, keep func(hyperpolygraph.Edge) bool, si bool) []int {
	g := newGraph(n, edges, keep, si)
	ns := len(g.start) - 1
	parent := make([]int32, ns)
	via := make([]int32, ns)
	var queue []int32
	var best []int
	work := 0
	for v := range n {
		if best != nil && work > maxBestWork {
			break
		}
		work += len(g.arcs)
		var c []int
		if !si {
			c = g.bfs(int32(v), func(s int32) bool { return s == int32(v) }, parent, via, queue)
		} else {
			// Either the cycle leaves v by a non-rw edge (then it may
			// come back any way), or it may leave by rw and must come
			// back by a non-rw edge.
			c = g.bfs(int32(2*v), func(s int32) bool { return s/2 == int32(v) }, parent, via, queue)
			if c2 := g.bfs(int32(2*v+1), func(s int32) bool { return s == int32(2*v+1) }, parent, via, queue); c2 != nil && (c == nil || len(c2) < len(c)) {
				c = c2
			}
		}
		if c != nil && (best == nil || len(c) < len(best)) {
			best = c
			if len(best) == 2 {
				break
			}
		}
	}
	return best
}

// singleRW returns a shortest cycle made of one rw edge and a path of kept
// non-rw edges back.
func singleRW(n int, edges []hyperpolygraph.Edge, nonRW func(hyperpolygraph.Edge) bool) []int {
	g := newGraph(n, edges, nonRW, false)
	parent := make([]int32, n)
	via := make([]int32, n)
	var queue []int32
	var best []int
	work := 0
	for i, e := range edges {
		if e.Rel != history.RW || int(e.From) >= n || int(e.To) >= n {
			continue
		}
		if best != nil && work > maxBestWork {
			break
		}
		work += len(g.arcs)
		var back []int
		if e.To != e.From {
			back = g.bfs(int32(e.To), func(s int32) bool { return s == int32(e.From) }, parent, via, queue)
			if back == nil {
				continue
			}
		}
		c := append([]int{i}, back...)
		if best == nil || len(c) < len(best) {
			best = c
			if len(best) == 2 {
				break
			}
		}
	}
	return best
}
