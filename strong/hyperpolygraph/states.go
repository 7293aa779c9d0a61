package hyperpolygraph

import "github.com/hyperiso/hyperiso/history"

// SI is decided on a doubled graph whose acyclicity is SI's (Biswas–Enea):
// every transaction t is two states, 2t and 2t+1, and a cycle of the
// doubled graph is a cycle of the dependency graph in which no two RW edges
// are adjacent. State 2t means "t was entered by an RW edge", from which no
// further RW edge may leave; state 2t+1 means "entered otherwise". Every
// place that walks or orders the SI graph takes its arcs from here.

// StateArcs returns the arcs that a dependency from→to (rw: an RW edge)
// stands for between graph states: u1→v1, and u2→v2 when two is set. With
// layers 1 (SER) that is the edge itself; in SI's doubled graph (layers 2)
// an RW edge is one arc and any other edge two. from and to are node
// numbers, not necessarily TxnIDs: callers that renumber transactions pass
// their own numbers. (Scalar results: an array of arcs made the theory's
// hot path a third slower.)
func StateArcs[N ~int32](from, to N, rw bool, layers int) (u1, v1, u2, v2 int32, two bool) {
	a, b := int32(from), int32(to)
	switch {
	case layers == 1:
		return a, b, 0, 0, false
	case rw:
		return 2*a + 1, 2 * b, 0, 0, false
	}
	return 2 * a, 2*b + 1, 2*a + 1, 2*b + 1, true
}

// PCArc returns the arc between PC's states (pc.go: s(t) = 2t, c(t) =
// 2t+1) that a dependency from→to of relation rel stands for: c→c for WW,
// s→c for RW, c→s otherwise (SO, WR, RT). The arcs s(t)→c(t) of every
// transaction are not edges' and are added by whoever builds the graph.
func PCArc[N ~int32](from, to N, rel history.Rel) (u, v int32) {
	a, b := 2*int32(from), 2*int32(to)
	switch rel {
	case history.WW:
		return a + 1, b + 1
	case history.RW:
		return a, b + 1
	}
	return a + 1, b
}

// Layers is the number of states per transaction at level SI (2) or any
// other strong level (1).
func (g *Graph) Layers() int {
	if g.Level == history.SI {
		return 2
	}
	return 1
}
