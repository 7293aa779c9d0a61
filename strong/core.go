package strong

import (
	"context"
	"slices"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/acyclic"
	hp "github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Limits of the UNSAT-core shortcut: beyond them the encoding (one
// variable per pair of writers of a key) is not worth building, and
// deletion with re-checks does the work alone.
const (
	// CoreMinTxns is the fewest transactions Core works on.
	CoreMinTxns  = 12
	coreMaxTxns  = 20000
	coreMaxPairs = 1 << 21
)

// Core looks for a small violating subset of keep with one incremental
// SAT solver and one assumption literal per transaction: a transaction whose
// literal is false contributes nothing but its place in session order, and
// a read takes part only while its transaction and every possible writer of
// its value do (as in NewSub). Unsatisfiability under a set of assumptions
// thus means that the sub-history of those transactions is violating (as
// far as the encoding goes: the caller re-checks the result with
// check.Check). The failed assumptions of the first solve give a core,
// which deletion over assumptions then shrinks, each step one incremental
// solve instead of a full re-check. It returns nil when the shortcut does
// not apply or finds nothing.
func Core(ctx context.Context, h *history.History, level history.Level, keep []bool) []history.TxnID {
	if p, ok := planFor(level); !ok || !p.core {
		return nil
	}
	in := func(t history.TxnID) bool {
		return t == history.InitTxn || (keep[t] && h.Txns[t].Status != history.Aborted)
	}
	var txns []history.TxnID
	for t := 1; t < len(h.Txns); t++ {
		if in(history.TxnID(t)) {
			txns = append(txns, history.TxnID(t))
		}
	}
	if len(txns) < CoreMinTxns || len(txns) > coreMaxTxns {
		return nil
	}
	ix := h.Index()
	// Final writers per key among the candidates.
	writers := make([][]history.TxnID, len(h.Keys))
	pairs := 0
	for _, t := range append([]history.TxnID{history.InitTxn}, txns...) {
		for _, w := range writesOf(h, t) {
			pairs += len(writers[w.Key])
			writers[w.Key] = append(writers[w.Key], t)
		}
	}
	if pairs > coreMaxPairs {
		return nil
	}
	e := &coreEnc{n: len(h.Txns)}
	sel := make([]cnf.Lit, len(h.Txns))
	for _, t := range txns {
		sel[t] = e.newVar()
	}
	// Read-from: an activity variable per read, one choice per candidate.
	for _, t := range txns {
		for _, rd := range ix.Reads(t) {
			cands := ix.Candidates(t, rd)
			ok := len(cands) > 0
			for _, c := range cands {
				if !in(c) {
					ok = false
				}
			}
			if !ok {
				continue // left out of every sub-history of keep
			}
			act := e.newVar()
			long := []cnf.Lit{act, -sel[t]}
			e.clause(-act, sel[t])
			for _, c := range cands {
				if c != history.InitTxn {
					e.clause(-act, sel[c])
					long = append(long, -sel[c])
				}
			}
			e.clause(long...)
			some := []cnf.Lit{-act}
			var xs []cnf.Lit
			for _, c := range cands {
				x := e.newVar()
				e.edge(x, hp.Edge{From: c, To: t, Rel: history.WR, Key: rd.Key})
				e.clause(-x, act)
				for _, y := range xs {
					e.clause(-x, -y)
				}
				xs = append(xs, x)
				some = append(some, x)
			}
			e.clause(some...)
		}
	}
	// Version order: T⊥ first (an edge that holds while its target is
	// selected), an orientation per pair of other writers, and an edge
	// variable per direction that holds while both writers are selected.
	for k, ws := range writers {
		key := history.KeyID(k)
		for i, a := range ws {
			if a == history.InitTxn {
				for _, b := range ws {
					if b != a {
						e.edge(sel[b], hp.Edge{From: a, To: b, Rel: history.WW, Key: key})
					}
				}
				continue
			}
			for _, b := range ws[i+1:] {
				if b == history.InitTxn {
					continue
				}
				o := e.newVar()
				ab, ba := e.newVar(), e.newVar()
				e.edge(ab, hp.Edge{From: a, To: b, Rel: history.WW, Key: key})
				e.edge(ba, hp.Edge{From: b, To: a, Rel: history.WW, Key: key})
				e.clause(-ab, o)
				e.clause(-ab, sel[a])
				e.clause(-ab, sel[b])
				e.clause(ab, -o, -sel[a], -sel[b])
				e.clause(-ba, -o)
				e.clause(-ba, sel[a])
				e.clause(-ba, sel[b])
				e.clause(ba, o, -sel[a], -sel[b])
			}
		}
	}
	th := acyclic.NewEdgeTheory(e.n, level, e.edges)
	// Session order holds whatever is selected: through a transaction left
	// out it is just the session order of the others.
	for _, s := range h.Sessions {
		prev := history.InitTxn
		for _, t := range s.Txns {
			if in(t) {
				th.Permanent(hp.Edge{From: prev, To: t, Rel: history.SO, Key: -1})
				prev = t
			}
		}
	}
	if th.Broken {
		return nil
	}
	s := cdcl.New(e.nv, cdcl.Options{Theory: th})
	for _, c := range e.clauses {
		if !s.AddClause(c) {
			return nil
		}
	}
	owner := map[cnf.Lit]history.TxnID{}
	var assume []cnf.Lit
	for _, t := range txns {
		owner[sel[t]] = t
		assume = append(assume, sel[t])
	}
	if s.SolveAssuming(ctx, assume) != cdcl.Unsat {
		return nil
	}
	core := s.FailedAssumptions()
	// Deletion over assumptions: drop each literal in turn; an unsatisfiable
	// rest shrinks to its failed set, kept in try's order so that core[:i],
	// the literals found necessary, stay in front. They are in every failed
	// set of a subset: without one of them even the larger set was
	// satisfiable. The solver's own order would leave literals untried.
	for i := 0; i < len(core) && ctx.Err() == nil; {
		try := slices.Delete(slices.Clone(core), i, i+1)
		switch s.SolveAssuming(ctx, try) {
		case cdcl.Unsat:
			failed := map[cnf.Lit]bool{}
			for _, l := range s.FailedAssumptions() {
				failed[l] = true
			}
			core = slices.DeleteFunc(try, func(l cnf.Lit) bool { return !failed[l] })
		case cdcl.Sat:
			i++
		default:
			i = len(core)
		}
	}
	var out []history.TxnID
	for _, l := range core {
		if t, ok := owner[l]; ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// writesOf returns t's final writes (T⊥'s initial writes for T⊥).
func writesOf(h *history.History, t history.TxnID) []history.Version {
	if t != history.InitTxn {
		return h.Index().Writes(t)
	}
	var out []history.Version
	for _, op := range h.Txns[t].Ops {
		out = append(out, history.Version{Key: op.Key, Value: op.Value})
	}
	return out
}

// coreEnc collects the clauses and the edges each variable asserts.
type coreEnc struct {
	n       int
	nv      int
	clauses [][]cnf.Lit
	edges   [][]hp.Edge // per variable
}

func (e *coreEnc) newVar() cnf.Lit {
	e.nv++
	for len(e.edges) <= e.nv {
		e.edges = append(e.edges, nil)
	}
	return cnf.Lit(e.nv)
}

func (e *coreEnc) clause(ls ...cnf.Lit) { e.clauses = append(e.clauses, ls) }

func (e *coreEnc) edge(v cnf.Lit, ed hp.Edge) { e.edges[v] = append(e.edges[v], ed) }
