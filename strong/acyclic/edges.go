package acyclic

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/solver/pk"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// EdgeTheory is the acyclicity theory for encodings in which every
// variable asserts, when true, a list of edges: the graph of the true
// variables' edges, with the RW edges that a true WR and a true WW edge of
// the same version derive, stays acyclic (for SI, its doubled graph). It
// serves encodings whose edges depend on more than Theory's WW/WR
// constraint variables, such as the per-transaction assumptions of
// strong.Core; Theory is the fast path for the hyper-polygraph's own
// encoding.
type EdgeTheory struct {
	edges   [][]hyperpolygraph.Edge // per variable
	layers  int
	pk      *pk.Graph
	reasons [][2]cnf.Lit
	frames  []edgeFrame
	// True edges by (key, source): the readers of a version and the later
	// writers of it.
	wr, ww map[writerKey][]edgeHalf
	// Broken is set when the permanent edges alone have a cycle.
	Broken bool
}

type edgeHalf struct {
	t   history.TxnID
	lit cnf.Lit
}

type edgeFrame struct {
	pkEdges, reasons int
	pushedWR         []writerKey
	pushedWW         []writerKey
}

// NewEdgeTheory returns the theory over n transactions at level, where
// edges[v] lists the edges variable v asserts.
func NewEdgeTheory(n int, level history.Level, edges [][]hyperpolygraph.Edge) *EdgeTheory {
	layers := 1
	if level == history.SI {
		layers = 2
	}
	return &EdgeTheory{edges: edges, layers: layers, pk: pk.New(layers * n),
		wr: map[writerKey][]edgeHalf{}, ww: map[writerKey][]edgeHalf{}}
}

// Permanent inserts an edge that holds in every assignment; call it before
// solving.
func (th *EdgeTheory) Permanent(e hyperpolygraph.Edge) {
	if c := th.add(e, 0, 0); c != nil {
		th.Broken = true
	}
}

// add inserts e, put there by literals l1 and l2, and returns a conflict
// clause if it closes a cycle.
func (th *EdgeTheory) add(e hyperpolygraph.Edge, l1, l2 cnf.Lit) []cnf.Lit {
	r := int32(len(th.reasons))
	th.reasons = append(th.reasons, [2]cnf.Lit{l1, l2})
	u1, v1, u2, v2, two := hyperpolygraph.StateArcs(e.From, e.To, e.Rel == history.RW, th.layers)
	arcs := [][2]int32{{u1, v1}, {u2, v2}}
	if !two {
		arcs = arcs[:1]
	}
	for _, a := range arcs {
		cyc, ok := th.pk.AddEdge(a[0], a[1], r)
		if ok {
			if len(th.frames) > 0 {
				th.frames[len(th.frames)-1].pkEdges++
			}
			continue
		}
		seen := map[cnf.Lit]bool{}
		clause := []cnf.Lit{}
		for _, ri := range append(slices.Clone(cyc), r) {
			for _, l := range th.reasons[ri] {
				if l != 0 && !seen[l] {
					seen[l] = true
					clause = append(clause, -l)
				}
			}
		}
		return clause
	}
	return nil
}

// Assign adds the edges of a true variable and the RW edges they derive.
func (th *EdgeTheory) Assign(l cnf.Lit) []cnf.Lit {
	th.frames = append(th.frames, edgeFrame{reasons: len(th.reasons)})
	if l < 0 {
		return nil
	}
	f := &th.frames[len(th.frames)-1]
	for _, e := range th.edges[l] {
		if c := th.add(e, l, 0); c != nil {
			return c
		}
		if e.Rel != history.WW && e.Rel != history.WR {
			continue
		}
		// A reader of e.From's version precedes every later writer of it.
		key := writerKey{e.Key, e.From}
		own, other := th.ww, th.wr
		if e.Rel == history.WR {
			own, other = th.wr, th.ww
			f.pushedWR = append(f.pushedWR, key)
		} else {
			f.pushedWW = append(f.pushedWW, key)
		}
		own[key] = append(own[key], edgeHalf{e.To, l})
		for _, o := range other[key] {
			if o.t == e.To {
				continue
			}
			rw := hyperpolygraph.Edge{From: o.t, To: e.To, Rel: history.RW, Key: e.Key}
			if e.Rel == history.WR {
				rw.From, rw.To = e.To, o.t
			}
			if c := th.add(rw, l, o.lit); c != nil {
				return c
			}
		}
	}
	return nil
}

// Unassign undoes the matching Assign.
func (th *EdgeTheory) Unassign(cnf.Lit) {
	f := th.frames[len(th.frames)-1]
	th.frames = th.frames[:len(th.frames)-1]
	for range f.pkEdges {
		th.pk.RemoveLast()
	}
	th.reasons = th.reasons[:f.reasons]
	for i := len(f.pushedWR) - 1; i >= 0; i-- {
		k := f.pushedWR[i]
		th.wr[k] = th.wr[k][:len(th.wr[k])-1]
	}
	for i := len(f.pushedWW) - 1; i >= 0; i-- {
		k := f.pushedWW[i]
		th.ww[k] = th.ww[k][:len(th.ww[k])-1]
	}
}

// Phase has no opinion.
func (th *EdgeTheory) Phase(int32) (bool, bool) { return false, false }
