package cdcl

import (
	"fmt"
	"slices"

	"github.com/hyperiso/hyperiso/solver/cnf"
)

// Theory gives meaning to some of the solver's variables (CDCL(T)); for
// hyperiso, edge variables of a dependency graph that must stay acyclic.
//
// The contract, which the solver guarantees and the theory relies on:
//
//  1. Assign(l) is called for every literal l that becomes true, in trail
//     order, once unit propagation has reached a fixpoint. Level-0 literals
//     are included. Before every decision, and before Solve returns Sat,
//     every literal on the trail has been passed to Assign, so at Sat the
//     theory has seen the whole model (and keeps it: see 5).
//  2. Assign returns nil when the theory is consistent with everything it
//     has been told, or a conflict clause: literals that are all false under
//     the current assignment (usually negations of Assigned literals; they may
//     be at any decision levels, need not include l or a current-level
//     literal, and may even be empty, meaning the theory is inconsistent by
//     itself). The clause must be a consequence of the theory alone (valid
//     in every future search, also under other assumptions). The solver
//     copies it, so the theory may reuse its buffer. After a conflict no
//     further Assign call is made before the solver has backtracked.
//  3. Every Assign call, whether it returned nil or a conflict, is matched by
//     exactly one later Unassign call with the same literal, and Unassign
//     calls come in exact reverse order of the Assign calls (LIFO). The
//     solver never unassigns towards the theory a literal it did not pass to
//     Assign (literals assigned by propagation but not yet shown to the
//     theory are retracted silently). A theory can therefore keep one undo
//     frame per Assign and pop it on Unassign.
//  4. Phase(v) is asked for the polarity of each decision on variable v
//     (unless Options.NoTheoryPhase); ok=false falls back to phase saving.
//  5. After Solve/SolveAssuming returns Sat the solver stays at the full
//     assignment, so the theory's state reflects the model, until the next
//     AddClause, Solve or SolveAssuming call, which first backtracks to
//     level 0. After Unsat or Unknown it has backtracked to level 0. Level-0
//     literals stay assigned (and Assigned) across Solve calls; they are
//     permanent.
//  6. Callbacks must not call the Solver's methods.
type Theory interface {
	Assign(l cnf.Lit) (conflict []cnf.Lit)
	Unassign(l cnf.Lit)
	Phase(v int32) (positive bool, ok bool)
}

// TheoryPropagator is an optional extension of Theory for theory
// propagation. When the theory has been shown every literal on the trail
// without conflict, Propagate is called; it returns nil if it has nothing to
// imply, or an implication clause: its first literal is the implied one and
// all the others must be false under the current assignment (they need be
// no more than the theory has been told). The solver assigns the first
// literal with the clause as its reason (a temporary clause, freed when the
// literal is unassigned; conflict analysis learns from it as usual). If the
// first literal is already true the clause is ignored; if it is false, the
// clause is a conflict clause as in Theory.Assign. After each non-nil answer
// the solver propagates again (unit propagation, Assign calls) and asks
// again, so each call should return an implication not yet returned at this
// point of the search. Like conflict clauses, implication clauses must be
// consequences of the theory alone.
type TheoryPropagator interface {
	Theory
	Propagate() (implication []cnf.Lit)
}

// loadTheoryClause copies a theory clause into s.thBuf in internal form,
// removing duplicate literals (keeping the first literal first when
// implication is set) and checking the contract: every literal (every
// literal but the first, for an implication) must be false.
func (s *Solver) loadTheoryClause(cl []cnf.Lit, implication bool) {
	s.thBuf = s.thBuf[:0]
	for _, l := range cl {
		if l == 0 || int(l.Var()) > s.nVars {
			panic(fmt.Sprintf("cdcl: theory clause has literal %d outside 1..%d", l, s.nVars))
		}
		s.thBuf = append(s.thBuf, toLit(l))
	}
	start := 0
	if implication {
		if len(s.thBuf) == 0 {
			panic("cdcl: empty theory implication clause")
		}
		start = 1
	}
	rest := s.thBuf[start:]
	slices.Sort(rest)
	rest = slices.Compact(rest)
	j := start
	for _, p := range rest {
		if implication && p == s.thBuf[0] {
			continue
		}
		if s.vals[p] != valFalse {
			kind := "conflict"
			if implication {
				kind = "implication"
			}
			panic(fmt.Sprintf("cdcl: theory %s clause %v has literal %d that is not false", kind, cl, p.ext()))
		}
		s.thBuf[j] = p
		j++
	}
	s.thBuf = s.thBuf[:j]
}
