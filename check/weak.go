package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/verdict"
	"github.com/hyperiso/hyperiso/weak"
)

// weakLevel decides RC, RA and CC by saturation (package weak), searching
// a writer for the reads with several candidate writers.
func weakLevel(ctx context.Context, h *history.History, level history.Level, opt Options, res *Result) error {
	opt.enter(res, "saturate")
	r, err := weak.Check(ctx, h, level, weak.Options{CommittedValidated: true, Fit: opt.fit()})
	if r != nil {
		for name, d := range r.Timings {
			res.TimingsMS[name] = ms(d)
		}
		for name, v := range r.Counters {
			res.Counters[name] = v
		}
		if r.CyclesOmitted > 0 {
			res.Counters["cycles_omitted"] = int64(r.CyclesOmitted)
		}
	}
	if err != nil {
		return err
	}
	// Check validated the committed transactions already; these findings
	// are on unknown-status transactions some read needs.
	for _, f := range r.Findings {
		res.Anomalies = append(res.Anomalies, FindingAnomaly(h, f))
	}
	if c := r.Core; c != nil && c.Cycle != nil {
		// First, so that explain takes it: the core and one cycle it closes.
		a := weakAnomaly(h, level, *c.Cycle)
		a.Description += "; " + c.Describe(h, 10)
		rc := &ReadCore{Minimal: c.Minimal}
		for _, rd := range c.Reads {
			cr := CoreRead{Txn: Ref(h, rd.Txn), Op: int(rd.Op), Read: rd.Describe(h)}
			for _, w := range rd.Writers {
				cr.Writers = append(cr.Writers, Ref(h, w))
			}
			rc.Reads = append(rc.Reads, cr)
		}
		a.ReadCore = rc
		res.Anomalies = append(res.Anomalies, a)
	}
	for _, v := range r.Violations {
		a := weakAnomaly(h, level, v)
		if len(v.Choices) > 0 {
			a.Description += fmt.Sprintf("; the cycle depends on %d writer choice(s) for reads with several candidate writers, and no choice of writers avoids every such cycle: %s", len(v.Choices), weak.DescribeChoices(h, v.Choices, 10))
		}
		res.Anomalies = append(res.Anomalies, a)
	}
	switch r.Verdict {
	case verdict.Satisfied:
		res.Verdict = Satisfied
		for _, t := range r.Order {
			res.Witness = append(res.Witness, Ref(h, t))
		}
		if len(r.Chosen) > 0 {
			// The witness of a history with duplicate values: the writer
			// chosen for each read with several candidates.
			what := fmt.Sprintf("%d reads have", len(r.Chosen))
			if len(r.Chosen) == 1 {
				what = "1 read has"
			}
			res.Reason = fmt.Sprintf("%s several candidate writers; a choice of writers that satisfies the level: %s", what, weak.DescribeChoices(h, r.Chosen, 3))
		}
	case verdict.Violated:
		res.Verdict = Violated
	default:
		res.Verdict = Unknown
		res.Reason = r.Reason
		if res.Reason == "" {
			res.Reason = r.Duplicates.Reason(h)
		}
		return nil
	}
	res.Stage = ""
	return nil
}

// weakAnomaly reports a co′ cycle with a reason per edge.
func weakAnomaly(h *history.History, level history.Level, v weak.Violation) Anomaly {
	a := Anomaly{
		Type:        v.Kind.String(),
		Description: fmt.Sprintf("%s violation: %s", strings.ToUpper(level.String()), v.Describe(h)),
	}
	if c, ok := history.ClassOf(v.Kind.String()); ok {
		a.Class = c.Adya
	}
	// The cycle's transactions, then the readers whose reads forced its
	// inferred edges.
	seen := map[history.TxnID]bool{}
	add := func(t history.TxnID) {
		if !seen[t] {
			seen[t] = true
			a.Txns = append(a.Txns, Ref(h, t))
		}
	}
	for _, t := range v.Txns() {
		add(t)
	}
	for _, e := range v.Cycle {
		if e.Rel == history.CO {
			add(e.Reader)
		}
	}
	for _, e := range v.Cycle {
		ed := Edge{From: h.Txns[e.From].ID, To: h.Txns[e.To].ID, Relation: e.Rel.String(), Reason: e.Reason(h)}
		if e.Key >= 0 {
			k := h.Key(e.Key)
			ed.Key, ed.KeyName = &k, h.KeyName(e.Key)
		}
		a.Edges = append(a.Edges, ed)
	}
	return a
}
