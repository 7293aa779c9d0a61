package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/anomaly"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/verdict"
)

// StrategyNames lists the solver strategies that decide level, the
// default first (none for a level that takes no --strategy).
func StrategyNames(level history.Level) []string { return strong.StrategyNames(level) }

// strongLevel asks the engine (package strong) and reports its outcome.
func strongLevel(ctx context.Context, h *history.History, level history.Level, opt Options, res *Result) error {
	out, err := strong.Decide(ctx, h, level, strong.Options{
		Strategy: opt.Strategy,
		RealTime: opt.RealTime,
		Fit:      opt.fit(),
		OnStage:  func(stage string) { opt.enter(res, stage) },

		DefaultLevel: opt.DefaultLevel,
	})
	for k, v := range out.TimingsMS {
		res.TimingsMS[k] += v
	}
	for k, v := range out.Counters {
		res.Counters[k] = v
	}
	res.Stage = out.Stage
	if err != nil {
		return err
	}
	switch out.Verdict {
	case verdict.Satisfied:
		res.Verdict = Satisfied
		for i, t := range out.Order {
			r := Ref(h, t)
			if out.Snapshots != nil && out.Snapshots[i] >= 0 {
				r.Snapshot = &out.Snapshots[i]
			}
			res.Witness = append(res.Witness, r)
		}
	case verdict.Violated:
		res.Verdict = Violated
		a := violationAnomaly(h, level, out.Violation, opt.fit())
		if b := out.Violation.Blame; b != nil {
			// Each transaction's level: its own in a mixed check (resolved
			// once before, without error), else the level checked (RR's
			// search holds every transaction to it).
			levels := make([]history.Level, len(h.Txns))
			for t := range levels {
				levels[t] = level
			}
			if level == history.Mixed {
				levels, _ = strong.Levels(h, opt.DefaultLevel)
			}
			a.Axiom = b.Axiom
			culprit := Ref(h, b.Txn)
			a.Culprit = &culprit
			a.Description = blameWords(h, levels, b) + ". " + a.Description
		}
		res.Anomalies = append(res.Anomalies, a)
	default:
		res.Verdict, res.Reason = Unknown, out.Reason
	}
	return nil
}

// violationAnomaly words the engine's refutation for the report.
func violationAnomaly(h *history.History, level history.Level, v *strong.Violation, fit func(int64, string) error) Anomaly {
	switch v.Kind {
	case strong.UnwrittenRead:
		return Anomaly{
			Type:        history.UnsatisfiableRead,
			Description: fmt.Sprintf("%s read key %s = %s, which no transaction that may have committed wrote", h.TxnString(v.Reader), h.KeyString(v.Read.Key), h.ValueString(v.Read.Key, v.Read.Value)),
			Txns:        []TxnRef{Ref(h, v.Reader)},
		}
	}
	return cycleAnomaly(h, level, v.Cycle, v.Note, fit)
}

// cycleAnomaly reports a dependency cycle with its Adya/Elle class (package
// anomaly) and a plain-words reason per edge. A cycle among whose
// transactions two read the same version of a key and both overwrote it is
// reported as the lost update it contains.
func cycleAnomaly(h *history.History, level history.Level, cyc []hyperpolygraph.Edge, note string, fit func(int64, string) error) Anomaly {
	a := Anomaly{Type: history.CommitCycle, Description: fmt.Sprintf("%s violation: %s", strings.ToUpper(level.String()), note)}
	c := anomaly.Classify(h, level, cyc)
	if c.Class != "" {
		a.Type, a.Class = c.Class, c.Class
		a.Description = fmt.Sprintf("%s violation: %s; %s", strings.ToUpper(level.String()), c.Describe(h, level), note)
		cyc = c.Edges
	}
	r := anomaly.NewReasoner(h, level)
	r.Fit = fit
	reasons := r.Reasons(c)
	seen := map[history.TxnID]bool{}
	for i, e := range cyc {
		if !seen[e.From] {
			seen[e.From] = true
			a.Txns = append(a.Txns, Ref(h, e.From))
		}
		ed := Edge{From: h.Txns[e.From].ID, To: h.Txns[e.To].ID, Relation: e.Rel.String()}
		if e.Key >= 0 {
			k := h.Key(e.Key)
			ed.Key, ed.KeyName = &k, h.KeyName(e.Key)
		}
		if i < len(reasons) {
			ed.Reason = reasons[i]
		}
		a.Edges = append(a.Edges, ed)
	}
	return a
}
