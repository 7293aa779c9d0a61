package encode

import "context"

// AddTwoWidthNaive is addTwoWidth with the pairwise enumeration instead of
// the rank-window one, for comparison.
func (e *Encoding) AddTwoWidthNaive(br StateReacher) {
	w := e.newTwoWidth(context.Background(), nil, br.Layers(), br.Node, br.StateReaches)
	w.naive()
	w.derived()
}

// SetTwoWidthBudget sets the work and clause budgets and returns a function
// that restores them.
func SetTwoWidthBudget(work int64, clauses int) (restore func()) {
	w, c := maxTwoWidthWork, maxTwoWidthClauses
	maxTwoWidthWork, maxTwoWidthClauses = work, clauses
	return func() { maxTwoWidthWork, maxTwoWidthClauses = w, c }
}
