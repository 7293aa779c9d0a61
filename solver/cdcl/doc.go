// Package cdcl is hyperiso's CDCL(T) SAT solver: a conflict-driven clause
// learning solver with a theory interface, written for the acyclicity
// problems that isolation checking reduces to.
//
// The package owns everything below the theory: the clause database (one flat
// arena of literals, addressed by offsets), the two-watched-literal scheme
// with blocker literals (binary clauses live in the watchers themselves and
// are propagated without touching the arena), the trail and
// assignment, unit propagation, first-UIP conflict analysis with recursive
// clause minimisation and LBD computation, final conflict analysis for
// assumptions, the VSIDS decision heuristic (binary heap, phase saving,
// theory-suggested polarity), Luby and Glucose-style restarts, and learned
// clause reduction (by LBD or by activity) with arena compaction, and
// restarts that reuse the part of the trail the heuristic would redo.
//
// A Theory (for hyperiso, the Pearce–Kelly acyclicity theory) is told about
// every literal that becomes true, in trail order, once unit propagation has
// reached a fixpoint, and about every retraction, in exact LIFO order. It
// answers with conflict clauses, which the solver analyses like any other
// conflicting clause. See Theory for the exact contract.
//
// Files by concern:
//
//	lit.go        the internal literal encoding (from and to cnf.Lit, the public one)
//	clausedb.go   clause arena, allocation, deletion, compaction
//	watch.go      watch lists (blockers; binary clauses inline)
//	trail.go      assignment, trail, decision levels, backtracking
//	propagate.go  unit propagation and the theory round
//	analyze.go    1-UIP analysis, minimisation, LBD, final analysis
//	heuristic.go  VSIDS heap, activities, polarity
//	restart.go    restart policies, clause reduction, level-0 simplification
//	theory.go     the Theory contract and theory-clause handling
//	solver.go     the public API: New, AddClause, Solve, models, stats
package cdcl
