package encode

import "context"

// AddTwoWidthNaive is addTwoWidth with the pairwise enumeration instead of
// the rank-window one, for comparison.
func (e *Encoding) AddTwoWidthNaive(br StateReacher) {
	w := e.newTwoWidth(context.Background(), nil, br.Layers(), br.Node, br.StateReaches)
	w.naive()
	w.derived()
	_ = w.flush()
}

// SetTwoWidthBudget sets the work and clause budgets and returns a function
// that restores them.
func SetTwoWidthBudget(work int64, clauses int) (restore func()) {
	w, c := maxTwoWidthWork, maxTwoWidthClauses
	maxTwoWidthWork, maxTwoWidthClauses = work, clauses
	return func() { maxTwoWidthWork, maxTwoWidthClauses = w, c }
}

// SetTwoWidthPerVar sets the budgets per literal edge and per variable and their floor and
// returns a function that restores them.
func SetTwoWidthPerVar(work, clauses, floor int64) (restore func()) {
	w, c, f := twoWidthWorkPerEdge, twoWidthClausesPerVar, twoWidthFloor
	twoWidthWorkPerEdge, twoWidthClausesPerVar, twoWidthFloor = work, clauses, floor
	return func() { twoWidthWorkPerEdge, twoWidthClausesPerVar, twoWidthFloor = w, c, f }
}
