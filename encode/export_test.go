package encode

// AddTwoWidthNaive runs the pairwise enumeration instead of the rank-window
// one, for comparison.
func (e *Encoding) AddTwoWidthNaive(br BitReacher) { e.addTwoWidthNaive(br) }
