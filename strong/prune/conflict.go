// Conflicts found before solving, and the concrete cycles that prove them:
// a cycle of the known graph, or one per option of a constraint left with
// none.

package prune

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Conflict proves the history violates the level before any solving.
type Conflict struct {
	// Cycle is a concrete cycle: consecutive edges, the last ending where
	// the first starts. Every edge is in g.Known or is an edge of the
	// option being tried (the option itself or an RW edge it derives). For
	// SI every RW edge of the cycle follows a non-RW edge, cyclically.
	Cycle []hyperpolygraph.Edge
	// Options holds, when a constraint has no feasible option, one cycle
	// per option: for WW the orientations A→B then B→A, for WR the
	// candidates in WR.Cands order. Options[0] is Cycle. Nil when the known
	// graph itself is cyclic. The cycles use g.Known as it was when the
	// constraint was tested.
	Options [][]hyperpolygraph.Edge
	// WW or WR names the constraint with no feasible option, if any.
	WW *hyperpolygraph.WWPair
	WR *hyperpolygraph.WRSet
}

// knownCycle finds a cycle among the states Kahn's algorithm left with
// positive in-degree: each has a predecessor among them, so walking
// predecessors must repeat a state. An inheritance step v1 ⇒ v0 followed by
// v0's edge stands for v1's own copy of that edge, so it adds no edge.
func (p *pruner) knownCycle(indeg []int32) []hyperpolygraph.Edge {
	const inherited = -2
	m := p.m
	// pred[v] is a CSR index of an edge into v from a leftover state, or
	// inherited (from v+1).
	pred := make([]int32, m)
	for i := range pred {
		pred[i] = -1
	}
	src := make([]int32, len(p.dst))
	for u := range m {
		for i := p.off[u]; i < p.off[u+1]; i++ {
			src[i] = int32(u)
			if v := p.dst[i]; indeg[u] > 0 && indeg[v] > 0 && pred[v] < 0 {
				pred[v] = i
			}
		}
		if p.inherits(int32(u)) && indeg[u] > 0 && indeg[u-1] > 0 && pred[u-1] < 0 {
			pred[u-1] = inherited
		}
	}
	from := func(v int32) int32 {
		if pred[v] == inherited {
			return v + 1
		}
		return src[pred[v]]
	}
	v := int32(-1)
	for u := range m {
		if indeg[u] > 0 {
			v = int32(u)
			break
		}
	}
	seen := make([]bool, m)
	for !seen[v] {
		seen[v] = true
		v = from(v)
	}
	// v is on the cycle; walk it once more collecting edges (backwards).
	var out []hyperpolygraph.Edge
	for u := v; ; {
		if pred[u] != inherited {
			out = append(out, p.g.Known[p.edge[pred[u]]])
		}
		if u = from(u); u == v {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// optionCycle returns a cycle made of the first blocked edge of opt and a
// known path back to its source.
func (p *pruner) optionCycle(opt []hyperpolygraph.Edge) []hyperpolygraph.Edge {
	for _, e := range opt {
		u, v, ok := p.blocked(e.From, e.To, e.Rel == history.RW)
		if !ok {
			continue
		}
		return append([]hyperpolygraph.Edge{e}, p.path(v, u)...)
	}
	return nil
}

// path returns the known edges of a shortest state path from s to t.
func (p *pruner) path(s, t int32) []hyperpolygraph.Edge {
	if s == t {
		return nil
	}
	// via[v] is the CSR index of the edge that reached v, parent[v] the
	// state it left (v1 uses the edges of v0 as its own).
	via := make([]int32, p.m)
	parent := make([]int32, p.m)
	for i := range via {
		via[i] = -1
	}
	queue := []int32{s}
	via[s] = -2
	for len(queue) > 0 && via[t] == -1 {
		u := queue[0]
		queue = queue[1:]
		for _, from := range [2]int32{u, u - 1} {
			if from != u && !p.inherits(u) {
				break
			}
			for i := p.off[from]; i < p.off[from+1]; i++ {
				if v := p.dst[i]; via[v] == -1 {
					via[v], parent[v] = i, u
					queue = append(queue, v)
				}
			}
		}
	}
	var out []hyperpolygraph.Edge
	for v := t; v != s; v = parent[v] {
		out = append(out, p.g.Known[p.edge[via[v]]])
	}
	slices.Reverse(out)
	return out
}
