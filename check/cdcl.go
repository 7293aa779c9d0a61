package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/hyperiso/hyperiso/acyclic"
	"github.com/hyperiso/hyperiso/cdcl"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
)

// errTheory marks a model the acyclicity theory accepted although its graph
// has a cycle: a bug, reported instead of a wrong verdict.
var errTheory = errors.New("internal error: the solver's model has a cycle")

// cdclSolve solves enc with hyperiso's own CDCL(T) solver, whose theory
// keeps the chosen graph acyclic and, as polarity says, guides decisions.
func cdclSolve(polarity acyclic.Polarity) func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
	return func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		th, cyc := acyclic.New(enc, polarity)
		if cyc != nil {
			out.sat, out.lastCycle = false, cyc
			return nil
		}
		s := cdcl.New(enc.NumVars, cdcl.Options{Theory: th, NoTheoryPhase: polarity == acyclic.NoPolarity})
		for _, c := range enc.Clauses {
			if !s.AddClause(c) {
				break
			}
		}
		r := s.Solve(ctx)
		st := s.Stats()
		out.iterations = 1
		out.counters = map[string]int64{
			"decisions":        st.Decisions,
			"conflicts":        st.Conflicts,
			"propagations":     st.Propagations,
			"learned":          st.Learned,
			"restarts":         st.Restarts,
			"theory_conflicts": th.Conflicts,
		}
		switch r {
		case cdcl.Unsat:
			out.sat = false
			out.lastCycle = append([]hyperpolygraph.Edge(nil), th.Cycle...)
			return nil
		case cdcl.Sat:
		default:
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("solver gave up")
		}
		a, err := enc.Decode(s.Value)
		if err != nil {
			return fmt.Errorf("%w: %v", errTheory, err)
		}
		comp := enc.G.Resolve(a)
		if len(comp.FindCycles(1)) > 0 {
			return errTheory
		}
		out.sat, out.compatible = true, comp
		return nil
	}
}
