// Package cnf holds the one literal type that every producer and consumer of
// clauses shares: encode writes its clauses in it, cdcl solves them, the
// acyclicity theory (acyclic) reads assignments and answers conflicts in it,
// and the lazy strategies hand the same clauses to gini and gophersat. It
// depends on nothing, so none of those packages depends on another just for
// the type.
package cnf

// Lit is a literal in DIMACS convention: +v is variable v, -v its negation,
// with v ≥ 1. The zero Lit is not a literal.
type Lit int32

// Var returns the variable of l (≥ 1).
func (l Lit) Var() int32 {
	if l < 0 {
		return int32(-l)
	}
	return int32(l)
}

// Not returns the negation of l.
func (l Lit) Not() Lit { return -l }

// IsPos reports whether l is the positive literal of its variable.
func (l Lit) IsPos() bool { return l > 0 }
