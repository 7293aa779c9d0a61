package explain

import (
	"context"
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/anomaly"
	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// DefaultMaxCases bounds the case analysis when Options.MaxCases is 0.
const DefaultMaxCases = 64

// prover splits a counterexample's hyper-polygraph on its uncertain
// constraints until every branch has a cycle: the read-from choices of
// reads with several candidate writers, and the version orders nothing
// certain fixes. Each branch is first pruned, which settles most of them:
// an option that closes a cycle with what is already known is gone, and a
// constraint whose options all close cycles ends the branch with one case
// per option.
type prover struct {
	ctx      context.Context
	h        *history.History
	level    history.Level
	reasoner *anomaly.Reasoner
	max      int
	cases    []caseOut
	complete bool
}

// caseOut is a case before rendering.
type caseOut struct {
	choices []choice
	cycle   anomaly.Cycle
}

// choice is one uncertain constraint resolved, with the edge it asserts.
type choice struct {
	text string
	edge hyperpolygraph.Edge
}

// proveCases returns the case analysis of sub at level; complete is false
// when it was cut short (too many cases, or a branch without a cycle,
// which would mean the sub-history is not violating after all).
func proveCases(ctx context.Context, h *history.History, level history.Level, max int) ([]caseOut, bool) {
	if max <= 0 {
		max = DefaultMaxCases
	}
	p := &prover{ctx: ctx, h: h, level: level, reasoner: anomaly.NewReasoner(h, level), max: max, complete: true}
	// Unknown-status transactions are taken as committed here; the check
	// itself tried the alternatives.
	g, viol, err := strong.BuildGraph(ctx, h, level, func(history.TxnID) bool { return true }, false, nil)
	switch {
	case err != nil || g == nil:
		return nil, false
	case viol != nil:
		p.leaf(nil, g.Known) // the version orders the lists state form a cycle
		return p.cases, p.complete
	}
	p.prove(g, nil, 0)
	return p.cases, p.complete
}

func (p *prover) prove(g *hyperpolygraph.Graph, choices []choice, depth int) {
	if len(p.cases) >= p.max || p.ctx.Err() != nil || depth > 64 {
		p.complete = false
		return
	}
	g = g.Clone()
	conf, err := strong.Refute(p.ctx, g)
	if err != nil {
		p.complete = false
		return
	}
	if conf != nil {
		switch {
		case conf.WW != nil:
			i := slices.Index(g.WW, *conf.WW)
			if i < 0 {
				p.leafCycle(choices, conf.Cycle)
				return
			}
			for j, fwd := range []bool{true, false} {
				g2, ch := p.fixWW(g, i, fwd)
				if !p.leaf(append(slices.Clone(choices), ch), g2.Known) && j < len(conf.Options) {
					p.leafCycle(append(slices.Clone(choices), ch), conf.Options[j])
				}
			}
		case conf.WR != nil:
			i := slices.IndexFunc(g.WR, func(s hyperpolygraph.WRSet) bool {
				return s.Reader == conf.WR.Reader && s.Key == conf.WR.Key
			})
			if i < 0 {
				p.leafCycle(choices, conf.Cycle)
				return
			}
			for j := range g.WR[i].Cands {
				g2, ch := p.fixWR(g, i, j)
				if !p.leaf(append(slices.Clone(choices), ch), g2.Known) && j < len(conf.Options) {
					p.leafCycle(append(slices.Clone(choices), ch), conf.Options[j])
				}
			}
		default:
			if !p.leaf(choices, g.Known) {
				p.leafCycle(choices, conf.Cycle)
			}
		}
		return
	}
	switch {
	case len(g.WR) > 0:
		for j := range g.WR[0].Cands {
			g2, ch := p.fixWR(g, 0, j)
			p.prove(g2, append(slices.Clone(choices), ch), depth+1)
		}
	case len(g.WW) > 0:
		for _, fwd := range []bool{true, false} {
			g2, ch := p.fixWW(g, 0, fwd)
			p.prove(g2, append(slices.Clone(choices), ch), depth+1)
		}
	default:
		// Everything is settled and pruning found no cycle: the graph is
		// acyclic, so this branch is consistent.
		p.complete = false
	}
}

// leaf records the most specific short cycle of edges; false if none.
// Version orders that are certain on their own join the search (as Elle
// infers them): a transaction that read a key's version and then wrote the
// key installed a later version, and of two writers of a key in one session
// the later one did, since the other order closes a cycle of two edges.
// They let a write cycle show as the G0 it is rather than as the G1c its
// read-from edges also form.
func (p *prover) leaf(choices []choice, edges []hyperpolygraph.Edge) bool {
	edges = append(slices.Clone(edges), p.certainWW(edges)...)
	idx := anomaly.BestCycle(len(p.h.Txns), edges, p.level)
	if idx == nil {
		return false
	}
	cyc := make([]hyperpolygraph.Edge, len(idx))
	for i, j := range idx {
		cyc[i] = edges[j]
	}
	p.leafCycle(choices, cyc)
	return true
}

// certainWW returns the version orders that follow from a read-from edge
// of edges into a writer of the same key, and from session order.
func (p *prover) certainWW(edges []hyperpolygraph.Edge) []hyperpolygraph.Edge {
	h := p.h
	ix := h.Index()
	writes := func(t history.TxnID, k history.KeyID) bool {
		for _, w := range ix.Writes(t) {
			if w.Key == k {
				return true
			}
		}
		return false
	}
	var out []hyperpolygraph.Edge
	for _, e := range edges {
		if e.Rel == history.WR && e.From != history.InitTxn && writes(e.To, e.Key) {
			out = append(out, hyperpolygraph.Edge{From: e.From, To: e.To, Rel: history.WW, Key: e.Key})
		}
	}
	for _, s := range h.Sessions {
		last := map[history.KeyID]history.TxnID{}
		for _, t := range s.Txns {
			for _, w := range ix.Writes(t) {
				if prev, ok := last[w.Key]; ok {
					out = append(out, hyperpolygraph.Edge{From: prev, To: t, Rel: history.WW, Key: w.Key})
				}
				last[w.Key] = t
			}
		}
	}
	return out
}

func (p *prover) leafCycle(choices []choice, cyc []hyperpolygraph.Edge) {
	if len(p.cases) >= p.max {
		p.complete = false
		return
	}
	p.cases = append(p.cases, caseOut{choices: choices, cycle: anomaly.Classify(p.h, p.level, cyc)})
}

// fixWW settles g.WW[i] (A→B when fwd) on a copy of g, with the words
// of the choice.
func (p *prover) fixWW(g *hyperpolygraph.Graph, i int, fwd bool) (*hyperpolygraph.Graph, choice) {
	g = g.Clone()
	e := g.DecideWW(i, fwd)
	h := p.h
	text := fmt.Sprintf("%s's version of key %s precedes %s's", anomaly.Name(h, e.From), h.KeyString(e.Key), anomaly.Name(h, e.To))
	return g, choice{text: text, edge: e}
}

// fixWR settles g.WR[i] on its candidate j on a copy of g, with the words
// of the choice.
func (p *prover) fixWR(g *hyperpolygraph.Graph, i, j int) (*hyperpolygraph.Graph, choice) {
	g = g.Clone()
	s := g.WR[i]
	e := g.DecideWR(i, j)
	h := p.h
	text := fmt.Sprintf("%s read key %s = %s from %s", anomaly.Name(h, s.Reader), h.KeyString(s.Key), anomaly.Value(h, s.Key, s.Value), anomaly.Name(h, e.From))
	return g, choice{text: text, edge: e}
}

// render turns a case's cycle into report edges; an edge that is the
// case's own choice says so.
func (p *prover) render(co caseOut) Case {
	out := Case{Class: co.cycle.Class, Choices: []string{}}
	for _, ch := range co.choices {
		out.Choices = append(out.Choices, ch.text)
	}
	out.Edges = cycleEdges(p.h, p.reasoner, co.cycle, co.choices)
	return out
}

// cycleEdges renders a classified cycle with reasons.
func cycleEdges(h *history.History, r *anomaly.Reasoner, c anomaly.Cycle, choices []choice) []check.Edge {
	reasons := r.Reasons(c)
	var out []check.Edge
	for i, e := range c.Edges {
		ed := check.Edge{From: h.Txns[e.From].ID, To: h.Txns[e.To].ID, Relation: e.Rel.String(), Reason: reasons[i]}
		if e.Key >= 0 {
			k := h.Key(e.Key)
			ed.Key = &k
		}
		for _, ch := range choices {
			if ch.edge == e {
				ed.Reason = ch.text + ", as this case assumes (" + e.Rel.String() + ")"
			}
		}
		out = append(out, ed)
	}
	return out
}
