package hyperpolygraph

import "github.com/hyperiso/hyperiso/history"

// Parallel snapshot isolation is decided on the compatible graph itself
// (Cerone and Gotsman's characterisation): for some version order, no
// cycle of the dependency graph has at most one RW edge. That is, the
// graph without RW edges (so, wr, ww, rt) is acyclic, and no RW edge a→b
// has its target reaching its source through it. Long forks (cycles with
// two RW edges apart) and write skews are allowed; lost updates (ww then
// rw) are not.

// FindPSICycles returns up to max cycles with at most one RW edge, each as
// indices into c.Edges in path order; none means c satisfies PSI. As in
// FindCycles, a cycle's uncertain edges are set aside before the next
// search, so the cycles differ.
func (c *Compatible) FindPSICycles(max int) [][]int {
	n := c.G.N()
	return c.findMany(max, func(disabled []bool) []int { return c.psiCycle(n, disabled) })
}

// psiCycle finds one cycle with at most one RW edge among the edges not
// disabled, or nil.
func (c *Compatible) psiCycle(n int, disabled []bool) []int {
	// Without RW edges: a cycle there has none.
	noRW := make([]bool, len(c.Edges))
	copy(noRW, disabled)
	for i, e := range c.Edges {
		if e.Rel == history.RW {
			noRW[i] = true
		}
	}
	if cyc := findCycle(n, c.Edges, noRW, false); cyc != nil {
		return cyc
	}
	// The non-RW graph is a DAG: b reaches a only if b comes first in a
	// topological order, which skips most RW edges at once.
	out := make([][]int32, n) // edge indices by source
	indeg := make([]int32, n)
	for i, e := range c.Edges {
		if !noRW[i] {
			out[e.From] = append(out[e.From], int32(i))
			indeg[e.To]++
		}
	}
	pos := make([]int32, n)
	var queue []history.TxnID
	for v := range n {
		if indeg[v] == 0 {
			queue = append(queue, history.TxnID(v))
		}
	}
	for k := 0; k < len(queue); k++ {
		v := queue[k]
		pos[v] = int32(k)
		for _, ei := range out[v] {
			w := c.Edges[ei].To
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	// via[v] is the edge that reached v in the search stamped seen[v]; a
	// stamp per search spares clearing n entries for each RW edge.
	via := make([]int32, n)
	seen := make([]int32, n)
	var stack []history.TxnID
	for i, e := range c.Edges {
		if e.Rel != history.RW || disabled[i] || pos[e.To] >= pos[e.From] {
			continue
		}
		// Search from b for a, within nodes no later than a.
		stamp := int32(i + 1)
		stack = append(stack[:0], e.To)
		seen[e.To], via[e.To] = stamp, int32(i)
		for len(stack) > 0 && seen[e.From] != stamp {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ei := range out[v] {
				w := c.Edges[ei].To
				if seen[w] != stamp && pos[w] <= pos[e.From] {
					seen[w], via[w] = stamp, ei
					stack = append(stack, w)
				}
			}
		}
		if seen[e.From] != stamp {
			continue
		}
		cyc := []int{i}
		var path []int
		for v := e.From; v != e.To; v = c.Edges[via[v]].From {
			path = append(path, int(via[v]))
		}
		for j := len(path) - 1; j >= 0; j-- {
			cyc = append(cyc, path[j])
		}
		return cyc
	}
	return nil
}

// PSIOrder returns a commit order for PSI: a topological order of the
// edges other than RW. ok is false if they have a cycle.
func (c *Compatible) PSIOrder() (order []history.TxnID, ok bool) {
	return c.topo(c.adjacency(func(r history.Rel) bool { return r != history.RW }), csr{})
}
