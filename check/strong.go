package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hyperiso/hyperiso/acyclic"
	"github.com/hyperiso/hyperiso/anomaly"
	"github.com/hyperiso/hyperiso/encode"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/hyperpolygraph"
	"github.com/hyperiso/hyperiso/prune"
)

func init() {
	pipelines[history.SER] = strongPipeline
	pipelines[history.SI] = strongPipeline
	pipelines[history.StrictSER] = strongPipeline
}

// Strategy is a way to solve the encoded hyper-polygraph.
type Strategy struct {
	Name string
	// Prune and TwoWidth switch the preprocessing stages.
	Prune, TwoWidth bool
	solve           func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error
}

// solveOutcome is what a strategy reports back.
type solveOutcome struct {
	sat        bool
	compatible *hyperpolygraph.Compatible // an acyclic compatible graph when sat
	lastCycle  []hyperpolygraph.Edge      // the last cycle blocked, as an example
	iterations int64
	blocking   int64
	counters   map[string]int64
}

// Strategies lists the selectable strategies for SER and SI; the first is
// the default.
var Strategies = []Strategy{
	{Name: "veristrong", Prune: true, TwoWidth: true, solve: cdclSolve(acyclic.LatestWriterPolarity)},
	{Name: "order-polarity", Prune: true, TwoWidth: true, solve: cdclSolve(acyclic.OrderPolarity)},
	{Name: "no-polarity", Prune: true, TwoWidth: true, solve: cdclSolve(acyclic.NoPolarity)},
	{Name: "no-2width", Prune: true, TwoWidth: false, solve: cdclSolve(acyclic.LatestWriterPolarity)},
	// Without pruning there is no reachability, hence no width-two clauses.
	{Name: "no-prune", Prune: false, TwoWidth: false, solve: cdclSolve(acyclic.LatestWriterPolarity)},
	{Name: "lazy-gini", Prune: true, TwoWidth: true, solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, newGini(enc.NumVars), out)
	}},
	{Name: "lazy-gophersat", Prune: true, TwoWidth: true, solve: func(ctx context.Context, enc *encode.Encoding, out *solveOutcome) error {
		return lazySolve(ctx, enc, &gophersatBackend{nv: enc.NumVars}, out)
	}},
}

// StrategyNames lists the names of Strategies.
func StrategyNames() []string {
	var out []string
	for _, s := range Strategies {
		out = append(out, s.Name)
	}
	return out
}

func findStrategy(name string) (Strategy, error) {
	if name == "" {
		return Strategies[0], nil
	}
	for _, s := range Strategies {
		if s.Name == name {
			return s, nil
		}
	}
	return Strategy{}, fmt.Errorf("unknown strategy %q (want one of %s)", name, strings.Join(StrategyNames(), ", "))
}

// maxAmbiguousUnknown bounds the subsets of optional unknown-status
// transactions tried one by one.
const maxAmbiguousUnknown = 8

func strongPipeline(ctx context.Context, h *history.History, opt Options, res *Result) error {
	strat, err := findStrategy(opt.Strategy)
	if err != nil {
		return err
	}
	level, _ := history.ParseLevel(res.Level)
	needOne := h.ListFacts().UnknownAppenders
	forced, optional, viol := planUnknown(h, level, needOne)
	if viol != nil {
		res.Verdict = Violated
		res.Anomalies = append(res.Anomalies, *viol)
		return nil
	}
	if len(optional) > maxAmbiguousUnknown {
		res.Verdict = Unknown
		res.Reason = fmt.Sprintf("%d unknown-status transactions may or may not have committed and are read ambiguously; at most %d are tried", len(optional), maxAmbiguousUnknown)
		return nil
	}
	var first *Result
masks:
	for mask := 0; mask < 1<<len(optional); mask++ {
		include := func(t history.TxnID) bool {
			if forced[t] {
				return true
			}
			for i, u := range optional {
				if u == t {
					return mask&(1<<i) != 0
				}
			}
			return false
		}
		for _, set := range needOne {
			if !slices.ContainsFunc(set, include) {
				continue masks // an observed list element would have no appender
			}
		}
		sub := *res
		sub.TimingsMS = map[string]float64{}
		sub.Counters = map[string]int64{}
		sub.Anomalies = nil
		if err := solveOnce(ctx, h, level, opt, strat, include, &sub); err != nil {
			res.Stage = sub.Stage
			res.TimingsMS, res.Counters = sub.TimingsMS, sub.Counters
			return err
		}
		if first == nil || sub.Verdict == Satisfied {
			first = &sub
		}
		if sub.Verdict == Satisfied {
			break
		}
	}
	if first == nil {
		res.Verdict = Violated
		res.Anomalies = append(res.Anomalies, Anomaly{
			Type:        history.UnsatisfiableRead,
			Description: "an observed list element was appended only by transactions that cannot all be taken as committed",
		})
		return nil
	}
	for k, v := range first.TimingsMS {
		res.TimingsMS[k] += v
	}
	res.Counters = first.Counters
	res.Verdict, res.Reason, res.Witness, res.Stage = first.Verdict, first.Reason, first.Witness, ""
	if first.Verdict == Unknown {
		res.Stage = first.Stage // where the budget stopped it
	}
	res.Anomalies = append(res.Anomalies, first.Anomalies...)
	if len(optional) > 0 {
		res.Counters["unknown_subsets"] = int64(1 << len(optional))
	}
	return nil
}

// planUnknown decides which unknown-status transactions take part: those
// some read cannot do without are forced in, those no read can use stay out
// (leaving them out only removes constraints), and the rest are optional.
// An unknown transaction that is itself inconsistent cannot have committed.
// needOne lists sets of unknown transactions of which at least one must
// have committed (the appenders of an observed list element): a set of one
// is forced in, the members of larger sets are optional.
func planUnknown(h *history.History, level history.Level, needOne [][]history.TxnID) (forced []bool, optional []history.TxnID, viol *Anomaly) {
	forced = make([]bool, len(h.Txns))
	bad := map[history.TxnID]bool{}
	for _, f := range h.ValidateTxns(func(t history.TxnID) bool { return h.Txns[t].Status == history.Unknown }) {
		if f.Kind.ForbiddenAt(level) {
			bad[f.Txn] = true
		}
	}
	ix := h.Index()
	isOpt := map[history.TxnID]bool{}
	queued := make([]bool, len(h.Txns))
	var queue []history.TxnID
	push := func(t history.TxnID) {
		if !queued[t] {
			queued[t] = true
			queue = append(queue, t)
		}
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.Committed {
			push(history.TxnID(t))
		}
	}
	for _, set := range needOne {
		if len(set) == 1 {
			forced[set[0]] = true
			push(set[0])
			continue
		}
		for _, u := range set {
			if !isOpt[u] {
				isOpt[u] = true
				push(u)
			}
		}
	}
	// Forcing may turn an optional transaction into a forced one, so its
	// reads are revisited with the stronger status.
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		queued[t] = false
		certain := h.Txns[t].Status == history.Committed || forced[t]
		for _, r := range ix.Reads(t) {
			var unk []history.TxnID
			settled := false
			for _, w := range ix.Candidates(t, r) {
				switch {
				case h.Txns[w].Status == history.Committed || w == history.InitTxn || forced[w]:
					settled = true
				case !bad[w]:
					unk = append(unk, w)
				}
			}
			switch {
			case certain && !settled && len(unk) == 1:
				forced[unk[0]] = true
				delete(isOpt, unk[0])
				push(unk[0])
			case certain && !settled && len(unk) == 0:
				a := Anomaly{
					Type:        history.UnsatisfiableRead,
					Description: fmt.Sprintf("%s read key %s = %d, which only transactions that cannot have committed wrote", h.TxnString(t), h.KeyString(r.Key), h.Value(r.Key, r.Value)),
					Txns:        []TxnRef{Ref(h, t)},
				}
				return nil, nil, &a
			default:
				// Optional readers make their candidates optional too.
				for _, u := range unk {
					if !forced[u] && !isOpt[u] {
						isOpt[u] = true
						push(u)
					}
				}
			}
		}
	}
	for u := range isOpt {
		if !forced[u] {
			optional = append(optional, u)
		}
	}
	sort.Slice(optional, func(i, j int) bool { return optional[i] < optional[j] })
	return forced, optional, nil
}

// solveOnce runs build, prune, encode and solve for one choice of unknown
// transactions.
func solveOnce(ctx context.Context, h *history.History, level history.Level, opt Options, strat Strategy, include func(history.TxnID) bool, res *Result) error {
	t0 := time.Now()
	opt.enter(res, "build")
	fit := opt.fit()
	graphLevel := level
	if level == history.StrictSER {
		graphLevel = history.SER
	}
	g, viol, err := hyperpolygraph.BuildContext(ctx, h, graphLevel, include, hyperpolygraph.BuildOptions{Fit: fit})
	res.TimingsMS["build"] = ms(time.Since(t0))
	if err != nil {
		return err
	}
	if viol != nil {
		res.Verdict = Violated
		res.Anomalies = append(res.Anomalies, Anomaly{
			Type:        history.UnsatisfiableRead,
			Description: fmt.Sprintf("%s read key %s = %d, but no committed transaction wrote it", h.TxnString(viol.Reader), h.KeyString(viol.Read.Key), h.Value(viol.Read.Key, viol.Read.Value)),
			Txns:        []TxnRef{Ref(h, viol.Reader)},
		})
		return nil
	}
	if hints := h.HintsAt(level); len(hints) > 0 {
		if cyc := g.ApplyVersionHints(hints); cyc != nil {
			res.TimingsMS["build"] = ms(time.Since(t0))
			res.Verdict = Violated
			res.Anomalies = append(res.Anomalies, cycleAnomaly(h, level, cyc, "the version orders the observed lists state form a cycle"))
			return nil
		}
	}
	if level == history.StrictSER || opt.RealTime {
		res.Counters["realtime_edges"] = int64(len(g.AddRealTime()))
	}
	res.TimingsMS["build"] = ms(time.Since(t0))
	res.Counters["ww_constraints"] = int64(len(g.WW))
	res.Counters["wr_constraints"] = int64(len(g.WR))
	res.Counters["known_edges"] = int64(len(g.Known))
	var reach encode.Reacher
	if strat.Prune {
		t1 := time.Now()
		opt.enter(res, "prune")
		st, r, conflict, err := prune.Prune(ctx, g, prune.Options{Fit: fit})
		res.TimingsMS["prune"] = ms(time.Since(t1))
		if err != nil {
			if errors.Is(err, prune.ErrTooLarge) {
				res.Verdict, res.Reason = Unknown, err.Error()
				return nil
			}
			return err
		}
		res.Counters["prune_passes"] = int64(st.Passes)
		res.Counters["ww_constraints_pruned"] = int64(len(g.WW))
		res.Counters["wr_constraints_pruned"] = int64(len(g.WR))
		if conflict != nil {
			res.Verdict = Violated
			res.Anomalies = append(res.Anomalies, cycleAnomaly(h, level, conflict.Cycle, "found while pruning: every resolution of a constraint closes this cycle"))
			return nil
		}
		reach = r
	}
	t2 := time.Now()
	opt.enter(res, "encode")
	enc, err := encode.EncodeContext(ctx, g, reach, encode.Options{TwoWidth: strat.TwoWidth && reach != nil, Fit: fit})
	res.TimingsMS["encode"] = ms(time.Since(t2))
	if err != nil {
		return err
	}
	res.Counters["variables"] = int64(enc.NumVars)
	res.Counters["clauses"] = int64(len(enc.Clauses))
	res.Counters["two_width_clauses"] = int64(enc.TwoWidth)
	t3 := time.Now()
	opt.enter(res, "solve")
	if err := fit(solverBytes(enc), fmt.Sprintf("the solver's copy of the CNF (%d variables, %d clauses)", enc.NumVars, len(enc.Clauses))); err != nil {
		return err
	}
	var out solveOutcome
	err = strat.solve(ctx, enc, &out)
	res.TimingsMS["solve"] = ms(time.Since(t3))
	res.Counters["solver_iterations"] = out.iterations
	res.Counters["blocking_clauses"] = out.blocking
	for k, v := range out.counters {
		res.Counters[k] = v
	}
	if err != nil {
		return err
	}
	if out.sat {
		res.Verdict = Satisfied
		res.Witness = witness(h, level, out.compatible)
		return nil
	}
	res.Verdict = Violated
	desc := "every compatible graph has a cycle"
	if len(out.lastCycle) > 0 {
		desc += "; the last one the solver ruled out is shown"
	}
	res.Anomalies = append(res.Anomalies, cycleAnomaly(h, level, out.lastCycle, desc))
	return nil
}

// witness renders the order of an acyclic compatible graph, T⊥ left out:
// serial for SER, commit order with snapshots for SI.
func witness(h *history.History, level history.Level, c *hyperpolygraph.Compatible) []TxnRef {
	var out []TxnRef
	if level != history.SI {
		order, _ := c.Order()
		for _, t := range order {
			if t != history.InitTxn {
				out = append(out, Ref(h, t))
			}
		}
		return out
	}
	order, snap, _ := c.SnapshotOrder()
	for i, t := range order {
		if t == history.InitTxn {
			continue
		}
		r := Ref(h, t)
		// T⊥ comes first in the order and is not listed.
		s := max(snap[i]-1, 0)
		r.Snapshot = &s
		out = append(out, r)
	}
	return out
}

// cycleAnomaly reports a dependency cycle with its Adya/Elle class (package
// anomaly) and a plain-words reason per edge. A cycle among whose
// transactions two read the same version of a key and both overwrote it is
// reported as the lost update it contains.
func cycleAnomaly(h *history.History, level history.Level, cyc []hyperpolygraph.Edge, note string) Anomaly {
	a := Anomaly{Type: history.CommitCycle, Description: fmt.Sprintf("%s violation: %s", strings.ToUpper(level.String()), note)}
	c := anomaly.Classify(h, level, cyc)
	if c.Class != "" {
		a.Type, a.Class = c.Class, c.Class
		a.Description = fmt.Sprintf("%s violation: %s; %s", strings.ToUpper(level.String()), c.Describe(h, level), note)
		cyc = c.Edges
	}
	reasons := edgeReason(anomaly.NewReasoner(h, level), c)
	seen := map[history.TxnID]bool{}
	for i, e := range cyc {
		if !seen[e.From] {
			seen[e.From] = true
			a.Txns = append(a.Txns, Ref(h, e.From))
		}
		ed := Edge{From: h.Txns[e.From].ID, To: h.Txns[e.To].ID, Relation: e.Rel.String()}
		if e.Key >= 0 {
			k := h.Key(e.Key)
			ed.Key = &k
		}
		if i < len(reasons) {
			ed.Reason = reasons[i]
		}
		a.Edges = append(a.Edges, ed)
	}
	return a
}

// edgeReason explains each edge of a reported cycle in plain words.
func edgeReason(r *anomaly.Reasoner, c anomaly.Cycle) []string {
	return r.Reasons(c)
}
