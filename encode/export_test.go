package encode

// AddTwoWidthNaive runs the pairwise enumeration instead of the rank-window
// one, for comparison.
func (e *Encoding) AddTwoWidthNaive(br BitReacher) { e.addTwoWidthNaive(br) }

// SetTwoWidthBudget sets the work and clause budgets and returns a function
// that restores them.
func SetTwoWidthBudget(work int64, clauses int) (restore func()) {
	w, c := maxTwoWidthWork, maxTwoWidthClauses
	maxTwoWidthWork, maxTwoWidthClauses = work, clauses
	return func() { maxTwoWidthWork, maxTwoWidthClauses = w, c }
}
