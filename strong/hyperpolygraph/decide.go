package hyperpolygraph

import (
	"slices"

	"github.com/hyperiso/hyperiso/history"
)

// The methods below settle one uncertain constraint of a graph by hand, as
// a case split does (explain's proof by cases): the constraint leaves WW
// or WR, its edge joins Known, and with it the anti-dependencies it
// derives from what Known already holds. Pruning settles constraints in
// its own incremental structures; these are for a few choices on a copy.

// Clone copies g deeply enough that pruning and DecideWW/DecideWR on the
// copy leave g as it is.
func (g *Graph) Clone() *Graph {
	c := *g
	c.Known = slices.Clone(g.Known)
	c.WW = slices.Clone(g.WW)
	c.WR = make([]WRSet, len(g.WR))
	for i, s := range g.WR {
		s.Cands = slices.Clone(s.Cands)
		c.WR[i] = s
	}
	c.Reads = make([][]Read, len(g.Reads))
	for k, rs := range g.Reads {
		c.Reads[k] = slices.Clone(rs)
	}
	return &c
}

// DecideWW settles the version order g.WW[i]: A's version before B's when
// fwd, else B's before A's. Every known reader of the earlier version
// anti-depends on the later writer. It returns the WW edge.
func (g *Graph) DecideWW(i int, fwd bool) Edge {
	pr := g.WW[i]
	a, b := pr.A, pr.B
	if !fwd {
		a, b = b, a
	}
	g.WW = slices.Delete(g.WW, i, i+1)
	e := Edge{From: a, To: b, Rel: history.WW, Key: pr.Key}
	var add []Edge
	for _, k := range g.Known {
		if k.Rel == history.WR && k.Key == pr.Key && k.From == a && k.To != b {
			add = append(add, Edge{From: k.To, To: b, Rel: history.RW, Key: pr.Key})
		}
	}
	g.Known = append(append(g.Known, e), add...)
	return e
}

// DecideWR settles the read g.WR[i] on its candidate j: the read reads
// from that writer, and anti-depends on every known later writer of its
// version. It returns the WR edge.
func (g *Graph) DecideWR(i, j int) Edge {
	s := g.WR[i]
	w := s.Cands[j]
	g.WR = slices.Delete(g.WR, i, i+1)
	for k := range g.Reads {
		for m := range g.Reads[k] {
			rd := &g.Reads[k][m]
			switch {
			case rd.Set == int32(i):
				rd.Set, rd.Writer = -1, w
			case rd.Set > int32(i):
				rd.Set--
			}
		}
	}
	e := Edge{From: w, To: s.Reader, Rel: history.WR, Key: s.Key}
	var add []Edge
	for _, k := range g.Known {
		if k.Rel == history.WW && k.Key == s.Key && k.From == w && k.To != s.Reader {
			add = append(add, Edge{From: s.Reader, To: k.To, Rel: history.RW, Key: s.Key})
		}
	}
	g.Known = append(append(g.Known, e), add...)
	return e
}
