package encode

import (
	"fmt"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// The optional part (g.Opt) gets an inclusion variable per optional
// transaction and, for each edge that depends on inclusion, a variable
// that holds iff the edge is in the graph, so that the acyclicity theory
// only ever sees edges between taken transactions and unit propagation
// does the conjunctions:
//
//   - a pair of writers of which one is optional: fwd and bwd, at most one
//     true, one of them iff both writers are taken;
//   - a version order of g.Opt.Known: one variable iff both ends are taken;
//   - a read of an optional reader: one variable per candidate, exactly one
//     true iff the reader is taken, each implying its candidate is taken.
//
// A read-from candidate of the certain part that is optional implies its
// inclusion, and a known read-from edge from an optional writer takes it.

// optional appends the variables and clauses of g.Opt. With reach (the
// known graph's reachability, which pruning computed over the optional
// transactions too), an edge variable whose edge, or an RW edge it derives
// from a certain read, closes a cycle with known edges is false from the
// start: pruning's first case for the pairs it does not see.
func (e *Encoding) optional(reach Reacher) {
	opt := e.G.Opt
	e.Incl = make([]int32, len(opt.Is))
	newVar := func(asserts ...hyperpolygraph.Edge) cnf.Lit {
		e.NumVars++
		e.asserts = append(e.asserts, asserts)
		return cnf.Lit(e.NumVars)
	}
	for t, is := range opt.Is {
		if is {
			e.Incl[t] = int32(newVar())
		}
	}
	incl := func(t history.TxnID) cnf.Lit { return cnf.Lit(e.Incl[t]) }
	// holdsIff adds v ↔ (the optional ones of ends are taken).
	holdsIff := func(v cnf.Lit, ends ...history.TxnID) {
		long := []cnf.Lit{v}
		for _, t := range ends {
			if i := incl(t); i != 0 {
				e.Clauses = append(e.Clauses, []cnf.Lit{-v, i})
				long = append(long, -i)
			}
		}
		e.Clauses = append(e.Clauses, long)
	}
	readBlocked := func(c, r history.TxnID) bool { return false }
	// blocked reports whether WW edge a→b on x closes a cycle with known
	// edges, by itself or by the RW edges it derives from certain reads.
	blocked := func(x history.KeyID, a, b history.TxnID) bool { return false }
	if br, ok := reach.(StateReacher); ok {
		// closes reports whether edge from→to closes a cycle of the
		// (for SI doubled) known graph, as pruning tests it.
		closes := func(from, to history.TxnID, rw bool) bool {
			a, b := br.Node(from), br.Node(to)
			if a < 0 || b < 0 {
				return false
			}
			u1, v1, u2, v2, two := hyperpolygraph.StateArcs(a, b, rw, br.Layers())
			return br.StateReaches(v1, u1) || (two && br.StateReaches(v2, u2))
		}
		readers := map[uint64][]history.TxnID{}
		for k, rs := range e.G.Reads {
			for _, r := range rs {
				if r.Writer >= 0 {
					kt := hyperpolygraph.KeyTxn(history.KeyID(k), r.Writer)
					readers[kt] = append(readers[kt], r.Reader)
				}
			}
		}
		blocked = func(x history.KeyID, a, b history.TxnID) bool {
			if closes(a, b, false) {
				return true
			}
			for _, r := range readers[hyperpolygraph.KeyTxn(x, a)] {
				if r != b && closes(r, b, true) {
					return true
				}
			}
			return false
		}
		readBlocked = func(c, r history.TxnID) bool { return closes(c, r, false) }
	}
	e.OptWW = make([]int32, len(opt.WW))
	for i, p := range opt.WW {
		fwd := newVar(hyperpolygraph.Edge{From: p.A, To: p.B, Rel: history.WW, Key: p.Key})
		bwd := newVar(hyperpolygraph.Edge{From: p.B, To: p.A, Rel: history.WW, Key: p.Key})
		e.OptWW[i] = int32(fwd)
		e.Clauses = append(e.Clauses, []cnf.Lit{-fwd, -bwd})
		if blocked(p.Key, p.A, p.B) {
			e.Clauses = append(e.Clauses, []cnf.Lit{-fwd})
		}
		if blocked(p.Key, p.B, p.A) {
			e.Clauses = append(e.Clauses, []cnf.Lit{-bwd})
		}
		for _, t := range []history.TxnID{p.A, p.B} {
			if i := incl(t); i != 0 {
				e.Clauses = append(e.Clauses, []cnf.Lit{-fwd, i}, []cnf.Lit{-bwd, i})
			}
		}
		long := []cnf.Lit{fwd, bwd}
		for _, t := range []history.TxnID{p.A, p.B} {
			if i := incl(t); i != 0 {
				long = append(long, -i)
			}
		}
		e.Clauses = append(e.Clauses, long)
	}
	for _, ed := range opt.Known {
		v := newVar(ed)
		holdsIff(v, ed.From, ed.To)
		if blocked(ed.Key, ed.From, ed.To) {
			e.Clauses = append(e.Clauses, []cnf.Lit{-v})
		}
	}
	e.OptWR = make([]int32, len(opt.WR))
	for i, s := range opt.WR {
		r := incl(s.Reader)
		e.OptWR[i] = int32(e.NumVars + 1)
		some := []cnf.Lit{-r}
		for _, c := range s.Cands {
			x := newVar(hyperpolygraph.Edge{From: c, To: s.Reader, Rel: history.WR, Key: s.Key})
			e.Clauses = append(e.Clauses, []cnf.Lit{-x, r})
			if readBlocked(c, s.Reader) {
				e.Clauses = append(e.Clauses, []cnf.Lit{-x})
			}
			if ic := incl(c); ic != 0 {
				e.Clauses = append(e.Clauses, []cnf.Lit{-x, ic})
			}
			some = append(some, x)
		}
		e.Clauses = append(e.Clauses, some)
		for a := 1; a < len(some); a++ {
			for b := a + 1; b < len(some); b++ {
				e.Clauses = append(e.Clauses, []cnf.Lit{-some[a], -some[b]})
			}
		}
	}
	for i, s := range e.G.WR {
		for j, c := range s.Cands {
			if ic := incl(c); ic != 0 {
				e.Clauses = append(e.Clauses, []cnf.Lit{-cnf.Lit(e.WRBase[i] + int32(j)), ic})
			}
		}
	}
	for _, ed := range e.G.Known {
		if ed.Rel == history.WR && incl(ed.From) != 0 {
			e.Clauses = append(e.Clauses, []cnf.Lit{incl(ed.From)})
		}
	}
}

// optVars estimates the variables and clauses optional adds.
func optVars(opt *hyperpolygraph.Optional) (vars, clauses int64) {
	for _, is := range opt.Is {
		if is {
			vars++
		}
	}
	vars += 2*int64(len(opt.WW)) + int64(len(opt.Known))
	clauses += 6*int64(len(opt.WW)) + 3*int64(len(opt.Known))
	for _, s := range opt.WR {
		c := int64(len(s.Cands))
		vars += c
		clauses += 1 + 2*c + c*(c-1)/2
	}
	return vars, clauses
}

// IsOpt reports whether variable v belongs to the optional part.
func (e *Encoding) IsOpt(v int32) bool { return int(v) >= len(e.varInfo) }

// Asserts returns the edges variable v of the optional part puts in the
// graph when true (none for an inclusion variable).
func (e *Encoding) Asserts(v int32) []hyperpolygraph.Edge {
	return e.asserts[int(v)-len(e.varInfo)]
}

// Model is a solver model read back as a graph: the hyper-polygraph of the
// transactions it takes as committed (Graph.Taking) and the assignment of
// that graph's constraints.
type Model struct {
	G *hyperpolygraph.Graph
	A hyperpolygraph.Assignment
	// Taken lists the optional transactions the model takes.
	Taken []history.TxnID
	enc   *Encoding
	// wwLit and wrLit give, for G's pairs and sets past the encoding's
	// own, the literal that is true in the model for them.
	wwLit, wrLit []cnf.Lit
}

// Model reads a model back (see Model). Without an optional part G is the
// encoding's graph.
func (e *Encoding) Model(value func(v int32) bool) (*Model, error) {
	a, err := e.Decode(value)
	if err != nil {
		return nil, err
	}
	m := &Model{G: e.G, A: a, enc: e}
	opt := e.G.Opt
	if opt == nil {
		return m, nil
	}
	take := make([]bool, len(opt.Is))
	for t, v := range e.Incl {
		if v != 0 && value(v) {
			take[t] = true
			m.Taken = append(m.Taken, history.TxnID(t))
		}
	}
	g, optWW, optWR := e.G.Taking(take)
	m.G = g
	for _, i := range optWW {
		fwd := cnf.Lit(e.OptWW[i])
		switch {
		case value(int32(fwd)):
			m.A.Forward = append(m.A.Forward, true)
			m.wwLit = append(m.wwLit, fwd)
		case value(int32(fwd + 1)):
			m.A.Forward = append(m.A.Forward, false)
			m.wwLit = append(m.wwLit, fwd+1)
		default:
			p := opt.WW[i]
			return nil, fmt.Errorf("model leaves taken writers %d and %d of key %d unordered", p.A, p.B, p.Key)
		}
	}
	for _, i := range optWR {
		s := opt.WR[i]
		j := -1
		for k := range s.Cands {
			if value(e.OptWR[i] + int32(k)) {
				j = k
				break
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("model gives taken reader %d of key %d no writer", s.Reader, s.Key)
		}
		m.A.Choice = append(m.A.Choice, int32(j))
		m.wrLit = append(m.wrLit, cnf.Lit(e.OptWR[i]+int32(j)))
	}
	return m, nil
}

// Blocking returns a clause that the model falsifies and that every model
// falsifies whose graph has the cycle cyc (indices into comp.Edges, comp
// resolved from m.G and m.A): the negation of the literals behind its
// uncertain edges and of the inclusion of each optional transaction on it.
func (m *Model) Blocking(comp *hyperpolygraph.Compatible, cyc []int) []cnf.Lit {
	e := m.enc
	seen := map[cnf.Lit]bool{}
	var clause []cnf.Lit
	addNeg := func(l cnf.Lit) {
		if !seen[-l] {
			seen[-l] = true
			clause = append(clause, -l)
		}
	}
	for _, ei := range cyc {
		p := comp.Prov[ei]
		switch n := int32(len(e.G.WW)); {
		case p.WW >= n:
			addNeg(m.wwLit[p.WW-n])
		case p.WW >= 0:
			v := cnf.Lit(e.WWVar[p.WW])
			if !m.A.Forward[p.WW] {
				v = -v
			}
			addNeg(v)
		}
		switch n := int32(len(e.G.WR)); {
		case p.WR >= n:
			addNeg(m.wrLit[p.WR-n])
		case p.WR >= 0:
			addNeg(cnf.Lit(e.WRBase[p.WR] + m.A.Choice[p.WR]))
		}
		if e.Incl != nil {
			ed := comp.Edges[ei]
			for _, t := range []history.TxnID{ed.From, ed.To} {
				if v := e.Incl[t]; v != 0 {
					addNeg(cnf.Lit(v))
				}
			}
		}
	}
	return clause
}
