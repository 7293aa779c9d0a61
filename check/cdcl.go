package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/hyperiso/hyperiso/acyclic"
	"github.com/hyperiso/hyperiso/cdcl"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
)

// errTheory marks a model the acyclicity theory accepted although its graph
// has a cycle: a bug, reported instead of a wrong verdict.
var errTheory = errors.New("internal error: the solver's model has a cycle")

// cdclSolve solves enc with hyperiso's own CDCL(T) solver, whose theory
// keeps the chosen graph acyclic (and, as opt says, guides polarities and
// propagates).
func cdclSolve(opt acyclic.Options) func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
	return func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		if b := os.Getenv("HYPERISO_TP"); b != "" { // TEMPORARY: budget sweep
			opt.PropBudget, _ = strconv.Atoi(b)
		}
		th, cyc := acyclic.New(enc, opt)
		if cyc != nil {
			out.sat, out.lastCycle = false, cyc
			return nil
		}
		var theory cdcl.Theory = th
		if opt.PropBudget == 0 {
			theory = noPropagate{th} // spare the solver the empty Propagate calls
		}
		s := cdcl.New(enc.NumVars, cdcl.Options{Theory: theory, NoTheoryPhase: !opt.Polarity})
		buf := make([]cdcl.Lit, 0, 8)
		for _, c := range enc.Clauses {
			buf = buf[:0]
			for _, l := range c {
				buf = append(buf, cdcl.Lit(l))
			}
			if !s.AddClause(buf) {
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
			"theory_implied":   th.Implied,
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

// noPropagate hides the theory's Propagate method from the solver.
type noPropagate struct{ *acyclic.Theory }

func (t noPropagate) Assign(l cdcl.Lit) []cdcl.Lit { return t.Theory.Assign(l) }
func (t noPropagate) Unassign(l cdcl.Lit)          { t.Theory.Unassign(l) }
func (t noPropagate) Phase(v int32) (bool, bool)   { return t.Theory.Phase(v) }
