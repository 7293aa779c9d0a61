package hyperpolygraph

import "github.com/hyperiso/hyperiso/history"

// Prefix consistency is decided on a graph of two states per transaction
// t: its snapshot s(t) = 2t, the point of the arbitration order whose
// prefix it sees, and its commit c(t) = 2t+1, its own place in that order.
// A history satisfies PC iff, for some version order, the graph with these
// arcs is acyclic (docs/mixed.md sketches why):
//
//	s(t) → c(t)           every transaction sees only what precedes it
//	c(a) → s(b)           a →so b, a →wr b, a →rt b: b sees a
//	c(a) → c(b)           a →ww b: versions follow the order
//	s(a) → c(b)           a →rw b: a's snapshot misses b's write
//
// SI adds NoConflict, which turns a ww edge into c(a) → s(b); without it a
// lost update (a →ww b →rw a) is no cycle, while a long fork still is.

// pcGraph is the state graph of c's edges not disabled, as adjacency lists
// of (target state, edge index; -1 for s(t) → c(t)).
func (c *Compatible) pcGraph(disabled []bool) [][][2]int32 {
	n := c.G.N()
	adj := make([][][2]int32, 2*n)
	for t := range n {
		adj[2*t] = append(adj[2*t], [2]int32{int32(2*t + 1), -1})
	}
	for i, e := range c.Edges {
		if disabled != nil && disabled[i] {
			continue
		}
		u, v := PCArc(e.From, e.To, e.Rel)
		adj[u] = append(adj[u], [2]int32{v, int32(i)})
	}
	return adj
}

// FindPCCycles returns up to max cycles of the PC state graph, each as the
// indices into c.Edges of its edges in path order; none means c satisfies
// PC. As in FindCycles, a cycle's uncertain edges are set aside before the
// next search.
func (c *Compatible) FindPCCycles(max int) [][]int {
	return c.findMany(max, func(disabled []bool) []int { return pcCycle(c.pcGraph(disabled)) })
}

// pcCycle finds a cycle by iterative depth-first search and returns its
// edges (state arcs s(t) → c(t) left out), or nil.
func pcCycle(adj [][][2]int32) []int {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(adj))
	type frame struct{ v, next int32 }
	parentArc := make([]int32, len(adj)) // edge index that entered a state
	parent := make([]int32, len(adj))
	for root := range adj {
		if color[root] != white {
			continue
		}
		stack := []frame{{int32(root), 0}}
		color[root] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if int(f.next) == len(adj[f.v]) {
				color[f.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			a := adj[f.v][f.next]
			f.next++
			w := a[0]
			switch color[w] {
			case white:
				color[w], parent[w], parentArc[w] = grey, f.v, a[1]
				stack = append(stack, frame{w, 0})
			case grey:
				// f.v → w closes a cycle back along the stack.
				var cyc []int
				if a[1] >= 0 {
					cyc = append(cyc, int(a[1]))
				}
				for x := f.v; x != w; x = parent[x] {
					if parentArc[x] >= 0 {
						cyc = append(cyc, int(parentArc[x]))
					}
				}
				for i, j := 0, len(cyc)-1; i < j; i, j = i+1, j-1 {
					cyc[i], cyc[j] = cyc[j], cyc[i]
				}
				return cyc
			}
		}
	}
	return nil
}

// PCOrder returns, for PC, an arbitration order of the included nodes and
// each one's snapshot: snap[i] is how many nodes of order (from the start)
// order[i] sees. ok is false if the state graph has a cycle.
func (c *Compatible) PCOrder() (order []history.TxnID, snap []int, ok bool) {
	adj := c.pcGraph(nil)
	queue := topoOrder(adj)
	commits := 0
	snapOf := make([]int, c.G.N())
	for _, v := range queue {
		t := history.TxnID(v / 2)
		if c.G.Included[t] {
			if v%2 == 0 {
				snapOf[t] = commits
			} else {
				order = append(order, t)
				snap = append(snap, snapOf[t])
				commits++
			}
		}
	}
	return order, snap, len(queue) == len(adj)
}

// topoOrder returns the nodes of adj (arcs to a[0]) in a topological order
// (Kahn's); on a cyclic graph it returns only the nodes before the cycles,
// so len(result) == len(adj) says the graph is acyclic.
func topoOrder(adj [][][2]int32) []int32 {
	indeg := make([]int32, len(adj))
	for _, out := range adj {
		for _, a := range out {
			indeg[a[0]]++
		}
	}
	queue := make([]int32, 0, len(adj))
	for v := range adj {
		if indeg[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	for k := 0; k < len(queue); k++ {
		for _, a := range adj[queue[k]] {
			if indeg[a[0]]--; indeg[a[0]] == 0 {
				queue = append(queue, a[0])
			}
		}
	}
	return queue
}
