package strong

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/solver/cdcl"
	"github.com/hyperiso/hyperiso/strong/acyclic"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
)

// Strategy is a way to solve the encoded hyper-polygraph.
type Strategy struct {
	Name string
	// Prune and TwoWidth switch the preprocessing stages; Probe tries the
	// history's own order before any of them (run.probe).
	Prune, TwoWidth, Probe bool
	// PruneFixpoint prunes until a pass decides nothing; otherwise pruning
	// stops once a pass decides less than pruneSettle of what is pending
	// and leaves the rest to the solver.
	PruneFixpoint bool
	solve         func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error
}

// solveOutcome is what a strategy reports back.
type solveOutcome struct {
	sat        bool
	compatible *hyperpolygraph.Compatible // an acyclic compatible graph when sat
	lastCycle  []hyperpolygraph.Edge      // the last cycle blocked, as an example
	iterations int64
	blocking   int64
	counters   map[string]int64
	// fit is the memory budget's Fit, for the solver's clause database
	// (nil: no bound).
	fit func(need int64, what string) error
}

// pruneSettle is the share of the pending constraints under which a
// pruning pass is the last (prune.Options.Settle): on the shuffled scale
// histories a pass that decides less is worth less than its cost.
const pruneSettle = 1.0 / 32

// Strategies lists the selectable strategies for SER and SI; the first is
// the default.
var Strategies = []Strategy{
	{Name: "veristrong", Prune: true, TwoWidth: true, Probe: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPlain)},
	// The ablations switch one of veristrong's optimisations off each.
	{Name: "no-probe", Prune: true, TwoWidth: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPlain)},
	{Name: "order-polarity", Prune: true, TwoWidth: true, Probe: true, solve: cdclSolve(acyclic.OrderPolarity, graphPlain)},
	{Name: "no-polarity", Prune: true, TwoWidth: true, Probe: true, solve: cdclSolve(acyclic.NoPolarity, graphPlain)},
	{Name: "no-2width", Prune: true, TwoWidth: false, Probe: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPlain)},
	{Name: "prune-fixpoint", Prune: true, TwoWidth: true, Probe: true, PruneFixpoint: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPlain)},
	{Name: "no-chrono", Prune: true, TwoWidth: true, Probe: true, solve: cdclSolveWith(acyclic.LatestWriterPolarity, graphPlain, true, 0)},
	// Without pruning there is no reachability, hence no width-two clauses.
	{Name: "no-prune", Prune: false, TwoWidth: false, Probe: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPlain)},
	// The baselines: an off-the-shelf SAT solver, cycles blocked lazily.
	{Name: "lazy-gini", Prune: true, TwoWidth: true, solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, newGini(enc.NumVars), (*hyperpolygraph.Compatible).FindCycles, out)
	}},
	{Name: "lazy-gophersat", Prune: true, TwoWidth: true, solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, &gophersatBackend{nv: enc.NumVars}, (*hyperpolygraph.Compatible).FindCycles, out)
	}},
}

// strategyTables are the tables of strategies, by the name the level
// table's Strategies column gives them. Each is read when asked for, so
// that a test that replaces a table (Strategies) is heard.
var strategyTables = map[string]func() []Strategy{
	"graph":      func() []Strategy { return Strategies },
	"pc-theory":  func() []Strategy { return PCStrategies },
	"psi-theory": func() []Strategy { return PSIStrategies },
}

// StrategiesFor returns the strategies that decide level (its row's
// Strategies table), the default first; none for a level that takes no
// --strategy.
func StrategiesFor(level history.Level) []Strategy {
	r, _ := level.Row()
	if table, ok := strategyTables[r.Strategies]; ok {
		return table()
	}
	return nil
}

// StrategyNames lists the names of the strategies that decide level.
func StrategyNames(level history.Level) []string {
	var out []string
	for _, s := range StrategiesFor(level) {
		out = append(out, s.Name)
	}
	return out
}

// PSIStrategies lists the strategies for PSI; the first is the default.
// PSI forbids the cycles with at most one RW edge, which pruning for SER
// and SI would over-constrain (it removes options closing any cycle), so
// neither prunes as they do (Decide prunes with PruneMixed). cdcl-psi is
// hyperiso's CDCL(T) solver with PSI's theory (acyclic.NewPSI: SO ∪ WR ∪
// WW acyclic, no RW edge whose head reaches its tail); lazy-gini-psi is the
// lazy search on gini, each model tested by Compatible.FindPSICycles.
var PSIStrategies = []Strategy{
	{Name: "cdcl-psi", Probe: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPSI)},
	{Name: "lazy-gini-psi", solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, newGini(enc.NumVars), (*hyperpolygraph.Compatible).FindPSICycles, out)
	}},
}

// PCStrategies lists the strategies for PC; the first is the default. PC's
// forbidden cycles are those of its graph of snapshots and commits, which
// the acyclicity theory keeps acyclic as it does SER's and SI's graphs
// (cdcl-pc). Neither prunes as SER and SI do (that would drop options
// whose cycles PC allows) nor adds their width-two clauses (derived from
// their cycles): Decide prunes PC with PruneMixed instead. lazy-gini-pc is
// the lazy search on gini, each model tested by Compatible.FindPCCycles.
var PCStrategies = []Strategy{
	{Name: "cdcl-pc", Probe: true, solve: cdclSolve(acyclic.LatestWriterPolarity, graphPC)},
	{Name: "lazy-gini-pc", solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, newGini(enc.NumVars), (*hyperpolygraph.Compatible).FindPCCycles, out)
	}},
}

// Find returns the strategy called name ("" = the default) among those
// that decide level.
func Find(level history.Level, name string) (Strategy, error) {
	table := StrategiesFor(level)
	if len(table) == 0 {
		return Strategy{}, fmt.Errorf("%s takes no --strategy", level)
	}
	if name == "" {
		return table[0], nil
	}
	for _, s := range table {
		if s.Name == name {
			return s, nil
		}
	}
	return Strategy{}, fmt.Errorf("unknown strategy %q: %s is decided by the strategies %s", name, level, strings.Join(StrategyNames(level), ", "))
}

// errTheory marks a model the acyclicity theory accepted although its graph
// has a cycle: a bug, reported instead of a wrong verdict.
var errTheory = errors.New("internal error: the solver's model has a cycle")

// theoryGraph says which graph cdclSolve's theory keeps.
type theoryGraph int

const (
	graphPlain theoryGraph = iota // the dependency graph (SER), or SI's doubled graph
	graphPC                       // PC's graph of snapshots and commits
	graphPSI                      // PSI's: SO ∪ WR ∪ WW acyclic, RW edges beside it
)

// cdclSolve solves enc with hyperiso's own CDCL(T) solver, whose theory
// keeps the graph kind says free of the level's forbidden cycles and, as
// polarity says, guides decisions.
func cdclSolve(polarity acyclic.Polarity, kind theoryGraph) func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
	return cdclSolveWith(polarity, kind, true, chronoLevels)
}

// chronoLevels is the solver's chronological backtracking threshold
// (cdcl.Options.Chrono): a conflict whose backjump would undo more levels
// backtracks one level. A backjump undoes the theory's work on every
// decision it passes, and the solver redoes most of them: 1,000 sessions
// of 50 transactions listed session by session took 1.03 M decisions for
// 295 conflicts at SI, and take 107 k with it (docs/bench/cdcl).
const chronoLevels = 100

// cdclSolveWith is cdclSolve that, with hint false, leaves out the
// history's own order (acyclic.NewUnhinted): the path before it, for
// tests; chrono is the solver's cdcl.Options.Chrono.
func cdclSolveWith(polarity acyclic.Polarity, kind theoryGraph, hint bool, chrono int) func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
	return func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		newTheory := acyclic.New
		if !hint {
			newTheory = acyclic.NewUnhinted
		}
		switch kind {
		case graphPC:
			newTheory = acyclic.NewPC
		case graphPSI:
			newTheory = acyclic.NewPSI
		}
		th, cyc := newTheory(enc, polarity)
		if cyc != nil {
			out.sat, out.lastCycle = false, cyc
			return nil
		}
		s := cdcl.New(enc.NumVars, cdcl.Options{Theory: th, NoTheoryPhase: polarity == acyclic.NoPolarity, Fit: out.fit, Chrono: chrono})
		if polarity != acyclic.NoPolarity {
			// Decide in the history's own order: with polarities from
			// the same order, conflicts stay local and a backjump
			// re-decides little (docs/bench/twowidth).
			for v := int32(1); v <= int32(enc.NumVars); v++ {
				if p := th.Priority(v); p > 0 {
					s.SetActivity(v, 1e-3*p)
				}
			}
		}
		// One arena for the whole CNF, asked of the budget at once (the
		// learnt clauses ask as they come).
		lits := 0
		for _, c := range enc.Clauses {
			lits += len(c)
		}
		if s.Grow(len(enc.Clauses), lits) {
			for _, c := range enc.Clauses {
				if !s.AddClause(c) {
					break
				}
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
		if th.KnownArcsDropped > 0 {
			out.counters["theory_known_arcs_dropped"] = th.KnownArcsDropped
		}
		switch kind {
		case graphPC:
			out.counters["pc_known_rw_edges"] = th.KnownRW
		case graphPSI:
			out.counters["psi_known_rw_edges"] = th.KnownRW
			out.counters["psi_full_checks"] = th.FullChecks
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
			if err := s.Err(); err != nil {
				return err // the memory budget's refusal
			}
			return fmt.Errorf("solver gave up")
		}
		m, err := enc.Model(s.Value)
		if err != nil {
			return fmt.Errorf("%w: %v", errTheory, err)
		}
		// The graph of the model, resolved independently of the theory.
		comp := m.G.Resolve(m.A)
		find := comp.FindCycles
		switch kind {
		case graphPC:
			find = comp.FindPCCycles
		case graphPSI:
			find = comp.FindPSICycles
		}
		if len(find(1)) > 0 {
			return errTheory
		}
		out.sat, out.compatible = true, comp
		return nil
	}
}

// solverBytes estimates what a solver adds to enc: its clause arena, sized
// once (a three-word header and a word per literal, 4 bytes a word), two
// watchers of 8 bytes per clause in lists grown by append (24 bytes), a
// clause reference (4), and some 170 bytes of state per variable, in
// slices grown by append. Learnt clauses come on top: the solver asks the
// budget before its arena grows (cdcl.Options.Fit).
func solverBytes(enc *encode.Encoding) int64 {
	words := int64(0)
	for _, c := range enc.Clauses {
		words += 3 + int64(len(c))
	}
	return 4*words + 28*int64(len(enc.Clauses)) + 170*int64(enc.NumVars)
}
