package encode

// addTwoWidth adds the clauses that forbid cycles of width two; the
// implementation lands with the pruning work.
func (e *Encoding) addTwoWidth(reach Reacher) {}
