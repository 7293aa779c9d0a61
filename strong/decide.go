// Package strong is hyperiso's engine for the NP-complete levels: it decides
// whether a validated history satisfies SER, strict SER (SER with real-time
// order), SI, PSI, PC or a mix of levels. It owns the whole road from history to answer: the
// hyper-polygraph with the version orders lists state and real time,
// the plan for unknown-status transactions, pruning, the encoding, the
// solver strategy, and the witness order or the cycle that refutes the
// level. It also answers what explain asks of the same machinery: a small
// violating core under assumptions (Core) and whether pruning alone refutes
// a graph (Refute). It reports in its own terms (Outcome); package check
// turns an Outcome into the report.
package strong

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/encode"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
	"github.com/hyperiso/hyperiso/verdict"
)

// Options tune Decide.
type Options struct {
	// Strategy names the solver strategy ("" = the default, Strategies[0]).
	Strategy string
	// RealTime adds real-time order (strict-ser always has it).
	RealTime bool
	// Fit is asked before each large allocation whether it fits the memory
	// budget (memlimit.Budget.Fit); nil means no bound.
	Fit func(need int64, what string) error
	// OnStage is called with the name of each stage as Decide enters it.
	OnStage func(stage string)
	// DefaultLevel is, for level history.Mixed, the level of a transaction
	// that declares none (LevelNone: every transaction must declare one).
	DefaultLevel history.Level
}

// ViolationKind says what refutes the level.
type ViolationKind int

const (
	// Cycle: every compatible graph has a cycle; Violation.Cycle is one
	// (the last the solver ruled out; possibly empty).
	Cycle ViolationKind = iota + 1
	// UnwrittenRead: Violation.Reader read Violation.Read, which no
	// transaction that may have committed wrote.
	UnwrittenRead
)

// Violation is why a history violates the level.
type Violation struct {
	Kind  ViolationKind
	Cycle []hyperpolygraph.Edge
	// Note says where the cycle was found, for the report.
	Note   string
	Reader history.TxnID
	Read   history.ExtRead
	// Blame says, for a mixed-level history, whose axiom fails.
	Blame *hyperpolygraph.Blame
}

// Outcome is what Decide found.
type Outcome struct {
	Verdict   verdict.Verdict
	Reason    string
	Violation *Violation
	// Order is, when satisfied, a serial order (SER) or commit order (SI)
	// of the transactions taken as committed, T⊥ left out: the
	// unknown-status transactions in it are those taken.
	Order []history.TxnID
	// Snapshots[i] is, at SI, how many transactions of Order (from its
	// start) Order[i] sees.
	Snapshots []int
	// Stage is the last stage entered: where a budget or a cancellation
	// stopped the engine.
	Stage     string
	TimingsMS map[string]float64
	Counters  map[string]int64
}

func newOutcome() *Outcome {
	return &Outcome{TimingsMS: map[string]float64{}, Counters: map[string]int64{}}
}

func (o *Outcome) violated(v Violation) {
	o.Verdict, o.Violation = verdict.Violated, &v
}

// run is one Decide call: its options, strategy and level.
type run struct {
	opt   Options
	strat Strategy
	level history.Level
	plan  plan
	fit   func(need int64, what string) error
	// For level Mixed: each transaction's level, the prepared per-model
	// test, and the blame of the last refutation.
	levels []history.Level
	mixed  *hyperpolygraph.Mixed
	blame  *hyperpolygraph.Blame
	lazy   bool // build with the pairs pending: only pruning reads them
}

func (r *run) enter(out *Outcome, stage string) {
	out.Stage = stage
	if r.opt.OnStage != nil {
		r.opt.OnStage(stage)
	}
}

// Decide decides level (one whose row in history.Levels names this engine)
// for h, which must have passed
// validation (history.Validate) at that level. The Outcome is returned even
// with an error, for its stage, timings and counters.
func Decide(ctx context.Context, h *history.History, level history.Level, opt Options) (*Outcome, error) {
	out := newOutcome()
	var strat Strategy
	var err error
	p, ok := planFor(level)
	switch row, _ := level.Row(); {
	case !ok || row.Engine != history.Strong:
		err = fmt.Errorf("strong: level %s is not decided here", level)
	case row.Strategies != "":
		strat, err = Find(level, opt.Strategy)
	case opt.Strategy != "" || opt.RealTime:
		err = fmt.Errorf("%s is decided by one strategy, without real time", level)
	}
	if err != nil {
		return out, err
	}
	if p.plain != history.LevelNone && len(h.Selects) == 0 {
		return Decide(ctx, h, p.plain, opt)
	}
	r := &run{opt: opt, strat: strat, level: level, plan: p, fit: opt.Fit}
	levelOf := func(history.TxnID) history.Level { return level }
	if p.perTxn {
		if p.uniform {
			r.levels = everyAt(h, level)
		} else if r.levels, err = Levels(h, opt.DefaultLevel); err != nil {
			return out, err
		}
		r.strat = mixedStrategy(r)
		levelOf = func(t history.TxnID) history.Level { return r.levels[t] }
	}
	if p.probe == probeBeforeAll && r.strat.Probe {
		// A history recorded in the order it ran is settled before the
		// stronger levels' whole search below.
		if done, err := r.probeFirst(ctx, h, out); done || err != nil {
			return out, err
		}
	}
	if p.stronger {
		levels := r.levels
		if levels == nil {
			levels = make([]history.Level, len(h.Txns))
			for t := range levels {
				levels[t] = level
			}
		}
		if ser, err := serFirst(ctx, h, levels, opt); ser != nil || err != nil {
			return ser, err
		}
		if si, err := siFirst(ctx, h, levels, opt); si != nil || err != nil {
			return si, err
		}
	}
	if p.refuteItems {
		if items, err := refuteItems(ctx, h, p.plain, opt); items != nil || err != nil {
			return items, err
		}
	}
	if r.fit == nil {
		r.fit = func(int64, string) error { return nil }
	}
	plan, viol := planUnknownAt(h, levelOf)
	if viol != nil {
		out.violated(*viol)
		return out, nil
	}
	if r.levels != nil {
		rcOptional(h, r.levels, plan)
	}
	if done, err := r.valueSeq(ctx, h, plan, out); done || err != nil {
		return out, err
	}
	err = r.once(ctx, h, plan, out)
	if err == nil && out.Verdict != verdict.Unknown {
		out.Stage = "" // only an undecided outcome says where it stopped
	}
	if out.Violation != nil && plan.nOpt > 0 {
		out.Violation.Cycle = aroundOptional(out.Violation.Cycle, plan.optional)
	}
	return out, err
}

// once builds, prunes, encodes and solves the hyper-polygraph of the
// transactions plan admits, its optional ones decided by the solver.
func (r *run) once(ctx context.Context, h *history.History, plan *unknownPlan, out *Outcome) error {
	r.lazy = r.strat.Prune && plan.nOpt == 0 && r.plan.lazyPairs
	g, done, err := r.graph(ctx, h, plan.include, out)
	if err != nil || done {
		return err
	}
	// The probe runs before SplitOptional: it takes every optional
	// unknown-status transaction as committed, which is one of the
	// choices the search has.
	if r.strat.Probe && r.plan.probe == probeInSearch && r.probe(g, out) {
		return nil
	}
	if plan.nOpt > 0 {
		g.SplitOptional(plan.optional)
		out.Counters["unknown_optional"] = int64(plan.nOpt)
	}
	if r.plan.arbitration {
		r.pruneMixed(g, out)
	}
	if r.plan.perTxn {
		if viol := r.prepareMixed(g, out); viol != nil {
			out.violated(*viol)
			return nil
		}
	}
	if r.plan.probe == probeAfterModels && plan.nOpt == 0 && r.probe(g, out) {
		return nil
	}
	reach, done, err := r.prune(ctx, g, out)
	if err != nil || done {
		return err
	}
	t := time.Now()
	r.enter(out, "encode")
	enc, err := encode.EncodeContext(ctx, g, reach, encode.Options{TwoWidth: r.strat.TwoWidth && reach != nil, Fit: r.fit})
	out.TimingsMS["encode"] = ms(time.Since(t))
	if err != nil {
		return err
	}
	out.Counters["variables"] = int64(enc.NumVars)
	out.Counters["clauses"] = int64(len(enc.Clauses))
	out.Counters["two_width_clauses"] = int64(enc.TwoWidth)
	return r.solve(ctx, enc, out)
}

// graph builds the hyper-polygraph with the version orders the lists state
// and, where asked, real-time order. done is true when building alone
// decided the level.
func (r *run) graph(ctx context.Context, h *history.History, include func(history.TxnID) bool, out *Outcome) (g *hyperpolygraph.Graph, done bool, err error) {
	t := time.Now()
	defer func() { out.TimingsMS["build"] += ms(time.Since(t)) }()
	r.enter(out, "build")
	g, rt, viol, err := buildGraph(ctx, h, r.level, include, r.opt.RealTime, r.fit, r.lazy)
	if err != nil {
		return nil, true, err
	}
	if viol != nil {
		out.violated(*viol)
		return nil, true, nil
	}
	if row, _ := r.level.Row(); row.RealTime || r.opt.RealTime {
		out.Counters["realtime_edges"] = int64(rt)
	}
	out.Counters["ww_constraints"] = int64(g.NumPairs())
	out.Counters["wr_constraints"] = int64(len(g.WR))
	out.Counters["known_edges"] = int64(len(g.Known))
	return g, false, nil
}

// probeMaxBackward is the share of certain reads placed before their
// writer in the file above which the probe is not tried (a timed
// history's completion order is always tried): in a file in commit or
// completion order (collect's, Jepsen's) it is about 0.
const probeMaxBackward = 1.0 / 16

// probe tries, before any search, the version orders and reads the
// history's own order suggests (Graph.ResolveInOrder): on a history that
// satisfies the level and records its transactions in about the order
// they ran, that one graph is usually acyclic, and its order is the
// witness. It decides only that: a cyclic guess says nothing, and the
// search goes on as if it had not been tried. Counter order_probe is 1
// when it decided, 0 when it was tried in vain, -1 when the memory budget
// had no room for it, -2 when more than probeMaxBackward of the certain
// reads come before their writer in the file.
func (r *run) probe(g *hyperpolygraph.Graph, out *Outcome) (done bool) {
	hint := g.HistoryOrder()
	if hint == nil {
		return false
	}
	t := time.Now()
	r.enter(out, "probe")
	defer func() { out.TimingsMS["probe"] = ms(time.Since(t)) }()
	if !g.Timed() && g.BackwardReads(hint) > probeMaxBackward {
		// Not an order the transactions ran in: the guess would have a
		// cycle (sessions interleaved at random: 15 % of the reads).
		out.Counters["order_probe"] = -2
		return false
	}
	if r.fit(g.ResolveInOrderBytes(), "the history-order probe") != nil {
		// Only a shortcut: the search asks for its own memory.
		out.Counters["order_probe"] = -1
		return false
	}
	out.Counters["order_probe"] = 0
	c := g.ResolveInOrder(hint, r.plan.snapshots)
	if c == nil || (r.plan.accept != nil && !r.plan.accept(r, c)) {
		return false
	}
	order, snaps, ok := r.plan.order(r, c)
	if !ok {
		return false
	}
	out.Counters["order_probe"] = 1
	out.Verdict, out.Order, out.Snapshots = verdict.Satisfied, order, snaps
	out.Counters["unknown_taken"] = unknownTaken(g.H, order)
	return true
}

// probeFirst builds the graph of the transactions the plan for unknown
// outcomes admits and tries the probe on it, before anything else: for PC
// and PSI, whose Decide otherwise runs SER's whole pipeline first. The
// graph keeps its version-order pairs pending (the probe lists none), so
// that it costs what SER's lazy build does, not PC's listing of every
// pair. Where the plan or the build finds a violation, or the build does
// not fit the memory budget, it leaves the matter to the usual path.
func (r *run) probeFirst(ctx context.Context, h *history.History, out *Outcome) (done bool, err error) {
	plan, viol := planUnknownAt(h, func(history.TxnID) history.Level { return r.level })
	if viol != nil {
		return false, nil
	}
	r.lazy = true // once sets it anew
	g, done, err := r.graph(ctx, h, plan.include, out)
	if err != nil || done {
		out.Verdict, out.Violation = 0, nil
		return false, ctx.Err()
	}
	if !r.probe(g, out) {
		return false, nil
	}
	out.Stage = ""
	return true, nil
}

// prune resolves what the known graph already decides, when the strategy
// prunes, and returns the reachability the encoding's width-two clauses
// use (nil without pruning).
func (r *run) prune(ctx context.Context, g *hyperpolygraph.Graph, out *Outcome) (reach encode.Reacher, done bool, err error) {
	if !r.strat.Prune {
		return nil, false, nil
	}
	t := time.Now()
	r.enter(out, "prune")
	st, rc, conflict, err := prune.Prune(ctx, g, prune.Options{Fit: r.fit, Settle: r.settle()})
	out.TimingsMS["prune"] = ms(time.Since(t))
	if err != nil {
		if errors.Is(err, prune.ErrTooLarge) {
			out.Verdict, out.Reason = verdict.Unknown, err.Error()
			return nil, true, nil
		}
		return nil, true, err
	}
	out.Counters["prune_passes"] = int64(st.Passes)
	out.Counters["reach_strategy"] = int64(st.ReachStrategy) // 1 bitset rows, 2 chain vectors
	out.Counters["reach_chains"] = int64(st.ReachChains)
	out.Counters["reach_bytes"] = st.ReachBytes
	out.Counters["ww_constraints_pruned"] = int64(len(g.WW))
	out.Counters["known_edges_pruned"] = int64(st.KnownAfter)
	out.Counters["wr_constraints_pruned"] = int64(len(g.WR))
	if conflict != nil {
		out.violated(Violation{Kind: Cycle, Cycle: conflict.Cycle, Note: "found while pruning: every resolution of a constraint closes this cycle"})
		return nil, true, nil
	}
	return rc, false, nil
}

// settle is the pruning's Settle for the strategy.
func (r *run) settle() float64 {
	if r.strat.PruneFixpoint {
		return 0
	}
	return pruneSettle
}

// solve runs the strategy's solver on enc and turns its answer into the
// outcome: a witness order, or the last cycle ruled out.
func (r *run) solve(ctx context.Context, enc *encode.Encoding, out *Outcome) error {
	t := time.Now()
	r.enter(out, "solve")
	if err := r.fit(solverBytes(enc), fmt.Sprintf("the solver's copy of the CNF (%d variables, %d clauses)", enc.NumVars, len(enc.Clauses))); err != nil {
		return err
	}
	res := solveOutcome{fit: r.fit}
	err := r.strat.solve(ctx, enc, &res)
	out.TimingsMS["solve"] = ms(time.Since(t))
	out.Counters["solver_iterations"] = res.iterations
	out.Counters["blocking_clauses"] = res.blocking
	for k, v := range res.counters {
		out.Counters[k] = v
	}
	if err != nil {
		return err
	}
	if !res.sat {
		note := "every compatible graph has a cycle"
		if len(res.lastCycle) > 0 {
			note += "; the last one the solver ruled out is shown"
		}
		out.violated(Violation{Kind: Cycle, Cycle: res.lastCycle, Note: note, Blame: r.blame})
		return nil
	}
	out.Verdict = verdict.Satisfied
	out.Order, out.Snapshots, _ = r.plan.order(r, res.compatible)
	out.Counters["unknown_taken"] = unknownTaken(enc.G.H, out.Order)
	return nil
}

// unknownTaken counts the unknown-status transactions a witness takes as
// committed.
func unknownTaken(h *history.History, order []history.TxnID) int64 {
	taken := int64(0)
	for _, t := range order {
		if h.Txns[t].Status == history.Unknown {
			taken++
		}
	}
	return taken
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
