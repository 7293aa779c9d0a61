package strong

import (
	"context"
	"time"

	"github.com/crillab/gophersat/solver"
	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/hyperiso/hyperiso/solver/cnf"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// satBackend is the part of an off-the-shelf SAT solver the lazy strategy
// needs: add clauses between solves, solve, read the model.
type satBackend interface {
	addClause(c []cnf.Lit)
	solve(ctx context.Context) (sat bool, err error)
	value(v int32) bool
}

// cyclesPerModel bounds how many cycles one model contributes blocking
// clauses for; several per round save most of the re-solves.
const cyclesPerModel = 64

// lazySolve solves the CNF, checks the compatible graph of each model for
// the cycles the level forbids and blocks the uncertain edges of every cycle
// it finds, until a model has none (satisfied) or the clauses are
// unsatisfiable (violated). cycles is Compatible.FindCycles (SER, SI) or
// Compatible.FindPSICycles.
func lazySolve(ctx context.Context, enc *encode.Encoding, b satBackend, cycles func(*hyperpolygraph.Compatible, int) [][]int, out *solveOutcome) error {
	for _, c := range enc.Clauses {
		b.addClause(c)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		out.iterations++
		sat, err := b.solve(ctx)
		if err != nil {
			return err
		}
		if !sat {
			out.sat = false
			return nil
		}
		m, err := enc.Model(b.value)
		if err != nil {
			return err
		}
		comp := m.G.Resolve(m.A)
		found := cycles(comp, cyclesPerModel)
		if len(found) == 0 {
			out.sat = true
			out.compatible = comp
			return nil
		}
		out.lastCycle = cycleEdges(comp, found[0])
		for _, cyc := range found {
			clause := m.Blocking(comp, cyc)
			if len(clause) == 0 {
				// A cycle of certain edges: no assignment can avoid it.
				out.sat = false
				out.lastCycle = cycleEdges(comp, cyc)
				return nil
			}
			out.blocking++
			b.addClause(clause)
		}
	}
}

func cycleEdges(comp *hyperpolygraph.Compatible, cyc []int) []hyperpolygraph.Edge {
	out := make([]hyperpolygraph.Edge, len(cyc))
	for i, e := range cyc {
		out[i] = comp.Edges[e]
	}
	return out
}

// giniBackend drives github.com/go-air/gini incrementally.
type giniBackend struct{ s *gini.Gini }

func newGini(nv int) *giniBackend { return &giniBackend{s: gini.NewV(nv + 1)} }

func (b *giniBackend) addClause(c []cnf.Lit) {
	for _, l := range c {
		b.s.Add(z.Dimacs2Lit(int(l)))
	}
	b.s.Add(z.LitNull)
}

// solve polls the running solve, at first often (most calls of a lazy
// search are short), then every 50 ms, and watches the context. It must
// not wait with gini's Try: a Try that times out stops the solve, and the
// next Try then waits forever for the stopped solve's answer (a search
// longer than 50 ms hung until the time limit, issue 29 item 4); nor with
// Wait, which holds the lock Stop needs.
func (b *giniBackend) solve(ctx context.Context) (bool, error) {
	sv := b.s.GoSolve()
	wait := 20 * time.Microsecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if r, done := sv.Test(); done {
			return r == 1, nil
		}
		select {
		case <-ctx.Done():
			sv.Stop()
			return false, ctx.Err()
		case <-timer.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
		timer.Reset(wait)
	}
}

func (b *giniBackend) value(v int32) bool { return b.s.Value(z.Dimacs2Lit(int(v))) }

// gophersatBackend re-solves github.com/crillab/gophersat from the full
// clause list each round (its incremental clause addition is meant for model
// counting, so a fresh solver is the reliable way to add clauses).
type gophersatBackend struct {
	nv      int
	clauses [][]int
	model   []bool
}

func (b *gophersatBackend) addClause(c []cnf.Lit) {
	cl := make([]int, len(c))
	for i, l := range c {
		cl[i] = int(l)
	}
	b.clauses = append(b.clauses, cl)
}

func (b *gophersatBackend) solve(ctx context.Context) (bool, error) {
	if b.nv == 0 {
		b.model = nil
		return true, nil
	}
	pb := solver.ParseSliceNb(b.clauses, b.nv)
	if pb.Status == solver.Unsat {
		return false, nil
	}
	s := solver.New(pb)
	done := make(chan solver.Status, 1)
	go func() { done <- s.Solve() }()
	select {
	case st := <-done:
		if st != solver.Sat {
			return false, nil
		}
		b.model = s.Model()
		return true, nil
	case <-ctx.Done():
		// gophersat cannot be interrupted; its goroutine finishes on its own.
		return false, ctx.Err()
	}
}

func (b *gophersatBackend) value(v int32) bool {
	return int(v-1) < len(b.model) && b.model[v-1]
}
