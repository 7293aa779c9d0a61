package acyclic

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/solver/pk"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// PSI's theory. pk keeps G = SO ∪ WR ∪ WW (and RT) acyclic in a topological
// order; the RW edges stay beside it, and none may have its head reaching
// its tail in G (a cycle with one RW edge; cycles with two or more are
// allowed). An RW edge a→b can be broken only if b precedes a in the order,
// and then only by a path inside that window:
//   - inserting a→b, one search of pk bounded by the window settles it;
//   - inserting a G edge u→v, a broken RW edge a→b has b ⇝ u and v ⇝ a: a
//     budgeted search back from u collects such b and the RW edges into
//     them from after v, and a search forward from v, bounded by the
//     latest of their tails, looks for a tail.
//
// A check that runs out of budget is counted, and a full assignment reached
// while any is undone is re-checked edge by edge, so the theory is exact.

// PSIBudget bounds the work (nodes visited and edges looked at) of the
// backward search after a G-edge insertion, and that of the forward one;
// tests set it to 0 to leave every such check to the full re-check.
var PSIBudget = 64

// psiArc is an entry of an adjacency list: the pk node at the other end
// and the pk reason of the edge.
type psiArc struct{ node, reason int32 }

// psiState is what PSI keeps beside pk, indexed by pk node: G's edges (pk
// keeps its own lists private) and the RW edges, both undone LIFO.
type psiState struct {
	gOut, gIn   [][]psiArc
	rwOut, rwIn [][]psiArc
	rwStack     [][3]int32 // RW edges in insertion order (tail, head, reason)
	// setup is set while the known edges go in; they are checked at once.
	setup bool
	// incomplete is the sum of the undo frames' incomplete counts.
	incomplete int32
	// Search scratch: stamps and the edge a search entered each node by.
	stamp          int32
	bSeen, fSeen   []int32
	bNext, bReason []int32 // backward search: next node towards u, edge
	fPrev, fReason []int32 // forward search: previous node from v, edge
	queue          []int32
}

func newPSIState(n int) *psiState {
	return &psiState{
		gOut: make([][]psiArc, n), gIn: make([][]psiArc, n),
		rwOut: make([][]psiArc, n), rwIn: make([][]psiArc, n),
		setup: true,
		bSeen: make([]int32, n), fSeen: make([]int32, n),
		bNext: make([]int32, n), bReason: make([]int32, n),
		fPrev: make([]int32, n), fReason: make([]int32, n),
	}
}

// undo removes the adjacency of frame m's edges; the caller then pops
// m.pkEdges edges from pk.
func (s *psiState) undo(g *pk.Graph, m undoMark) {
	for i := range m.pkEdges {
		u, v, _ := g.Edge(g.NumEdges() - 1 - int(i))
		s.gOut[u] = s.gOut[u][:len(s.gOut[u])-1]
		s.gIn[v] = s.gIn[v][:len(s.gIn[v])-1]
	}
	for range m.rwEdges {
		e := s.rwStack[len(s.rwStack)-1]
		s.rwStack = s.rwStack[:len(s.rwStack)-1]
		s.rwOut[e[0]] = s.rwOut[e[0]][:len(s.rwOut[e[0]])-1]
		s.rwIn[e[1]] = s.rwIn[e[1]][:len(s.rwIn[e[1]])-1]
	}
	s.incomplete -= m.incomplete
}

// insertPSI adds e with pk reason r: an RW edge beside pk, any other edge
// to pk. It returns the conflict clause of a cycle with at most one RW
// edge that e closes.
func (t *Theory) insertPSI(e hyperpolygraph.Edge, r int32) []cnf.Lit {
	s := t.psi
	u, v := t.ids[e.From], t.ids[e.To]
	frame := &t.undo[len(t.undo)-1]
	if e.Rel == history.RW {
		s.rwOut[u] = append(s.rwOut[u], psiArc{v, r})
		s.rwIn[v] = append(s.rwIn[v], psiArc{u, r})
		s.rwStack = append(s.rwStack, [3]int32{u, v, r})
		frame.rwEdges++
		if s.setup {
			return nil
		}
		if path, ok := t.pk.Path(v, u); ok {
			return t.explain(append(slices.Clone(path), r))
		}
		return nil
	}
	cyc, ok := t.pk.AddEdge(u, v, r)
	if !ok {
		return t.explain(append(cyc, r))
	}
	frame.pkEdges++
	s.gOut[u] = append(s.gOut[u], psiArc{v, r})
	s.gIn[v] = append(s.gIn[v], psiArc{u, r})
	if s.setup {
		return nil
	}
	cl, complete := t.psiAfterG(u, v, r)
	if !complete {
		frame.incomplete++
		s.incomplete++
	}
	return cl
}

// psiAfterG looks for an RW edge a→b that the new G edge u→v (pk nodes,
// reason r) breaks: b ⇝ u → v ⇝ a. complete is false when a search ran out
// of budget before settling it.
func (t *Theory) psiAfterG(u, v, r int32) (clause []cnf.Lit, complete bool) {
	s := t.psi
	s.stamp++
	if s.stamp == 1<<31-1 {
		clear(s.bSeen)
		clear(s.fSeen)
		s.stamp = 1
	}
	st := s.stamp
	lu, lv := t.pk.Level(u), t.pk.Level(v)
	// Backward from u: the nodes b reaching u, and the latest tail among
	// the RW edges a→b with a after v (only those can be broken).
	complete = true
	hi := int32(-1)
	q := append(s.queue[:0], u)
	s.bSeen[u], s.bNext[u] = st, -1
	work := 0
	for head := 0; head < len(q); head++ {
		b := q[head]
		if work += 1 + len(s.rwIn[b]) + len(s.gIn[b]); work > PSIBudget {
			complete = false
			break
		}
		for _, a := range s.rwIn[b] {
			if la := t.pk.Level(a.node); la >= lv && la > hi {
				hi = la
			}
		}
		for _, p := range s.gIn[b] {
			if s.bSeen[p.node] != st {
				s.bSeen[p.node], s.bNext[p.node], s.bReason[p.node] = st, b, p.reason
				q = append(q, p.node)
			}
		}
	}
	if hi < 0 {
		s.queue = q
		return nil, complete
	}
	// Forward from v, through nodes no later than hi: every path v ⇝ a
	// stays inside the order's window.
	q = append(q[:0], v)
	s.fSeen[v], s.fPrev[v] = st, -1
	work = 0
	for head := 0; head < len(q); head++ {
		a := q[head]
		if work += 1 + len(s.rwOut[a]) + len(s.gOut[a]); work > PSIBudget {
			complete = false
			break
		}
		for _, w := range s.rwOut[a] {
			if s.bSeen[w.node] == st && t.pk.Level(w.node) <= lu {
				s.queue = q
				return t.psiExplain(u, v, r, a, w), true
			}
		}
		for _, x := range s.gOut[a] {
			if s.fSeen[x.node] != st && t.pk.Level(x.node) <= hi {
				s.fSeen[x.node], s.fPrev[x.node], s.fReason[x.node] = st, a, x.reason
				q = append(q, x.node)
			}
		}
	}
	s.queue = q
	return nil, complete
}

// psiExplain returns the clause of the cycle b ⇝ u → v ⇝ a →RW b that
// psiAfterG found (rw is a's RW edge to b).
func (t *Theory) psiExplain(u, v, r, a int32, rw psiArc) []cnf.Lit {
	s := t.psi
	var cyc []int32
	for x := rw.node; x != u; x = s.bNext[x] {
		cyc = append(cyc, s.bReason[x])
	}
	cyc = append(cyc, r)
	mark := len(cyc)
	for x := a; x != v; x = s.fPrev[x] {
		cyc = append(cyc, s.fReason[x])
	}
	slices.Reverse(cyc[mark:])
	return t.explain(append(cyc, rw.reason))
}

// psiFull checks every RW edge against G and returns the clause of the
// first broken one.
func (t *Theory) psiFull() []cnf.Lit {
	t.FullChecks++
	s := t.psi
	for _, e := range s.rwStack {
		a, b := e[0], e[1]
		if t.pk.Level(b) > t.pk.Level(a) {
			continue
		}
		if path, ok := t.pk.Path(b, a); ok {
			return t.explain(append(slices.Clone(path), e[2]))
		}
	}
	return nil
}
