package strong

import (
	"context"
	"fmt"
	"time"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/prune"
	"github.com/hyperiso/hyperiso/strong/valueseq"
	"github.com/hyperiso/hyperiso/verdict"
)

// valueSeqMinPairs is the most version-order pairs for which the
// value-sequence search is not tried. It is 0: on one key the pipeline
// already fails on a few hundred transactions (4 sessions of 120, 28k
// pairs: unknown after a minute; docs/valueseq.md) that the search settles
// in a tenth of a second. Tests set it to -1.
var valueSeqMinPairs int64 = 0

// valueSeq decides a history on one key by the search of package
// valueseq, before the hyper-polygraph is built: done is true when it
// decided. A search over its budget leaves the matter to the pipeline.
// Counter valueseq is 1 when it decided satisfied, 2 violated, 0 when it
// left the matter to the pipeline.
func (r *run) valueSeq(ctx context.Context, h *history.History, plan *unknownPlan, out *Outcome) (done bool, err error) {
	if row, _ := r.level.Row(); !r.plan.valueSeq || !r.strat.Probe || row.RealTime || r.opt.RealTime {
		return false, nil
	}
	if _, ok := valueseq.Applies(h); !ok || writerPairs(h, plan.include) <= valueSeqMinPairs {
		return false, nil
	}
	t := time.Now()
	r.enter(out, "valueseq")
	res, err := valueseq.Decide(ctx, h, valueseq.Options{
		Include:  plan.include,
		Optional: func(t history.TxnID) bool { return plan.optional[t] },
		Fit:      r.fit,
	})
	out.TimingsMS["valueseq"] = ms(time.Since(t))
	defer func() {
		if done && err == nil {
			out.Stage = "" // only an undecided outcome says where it stopped
		}
	}()
	out.Counters["valueseq"] = 0
	out.Counters["valueseq_states"] = res.States
	out.Counters["valueseq_dead"] = res.Dead
	if err != nil {
		return true, err
	}
	switch res.Verdict {
	case verdict.Satisfied:
		out.Counters["valueseq"] = 1
		out.Verdict, out.Order = verdict.Satisfied, res.Order
		if r.plan.snapshots {
			// A serial order: each transaction sees all before it.
			out.Snapshots = make([]int, len(res.Order))
			for i := range out.Snapshots {
				out.Snapshots[i] = i
			}
		}
		out.Counters["unknown_taken"] = unknownTaken(h, res.Order)
		return true, nil
	case verdict.Violated:
		out.Counters["valueseq"] = 2
		v := Violation{Kind: Cycle, Note: fmt.Sprintf(
			"no interleaving of the sessions walks through the key's values as the reads and writes require (value-sequence search, %d states)", res.States)}
		if cyc := r.pruneCycle(ctx, h, plan, out); cyc != nil {
			v = *cyc
		}
		out.violated(v)
		return true, nil
	}
	return false, nil
}

// pruneCycle names a cycle for a violation the search found, when
// pruning finds one: building the graph with its pairs pending and
// pruning cost a fraction of encoding them, and the explain layer and the
// report work from a cycle. It returns nil when pruning leaves the
// history possible (the search went further), when transactions are
// optional (pruning would first have to split them), or when the build or
// pruning does not fit the budget.
func (r *run) pruneCycle(ctx context.Context, h *history.History, plan *unknownPlan, out *Outcome) *Violation {
	if plan.nOpt > 0 {
		return nil
	}
	t := time.Now()
	defer func() { out.TimingsMS["valueseq_cycle"] = ms(time.Since(t)) }()
	g, _, viol, err := buildGraph(ctx, h, r.level, plan.include, false, r.fit, true)
	if err != nil {
		return nil
	}
	if viol != nil {
		return viol
	}
	_, _, conflict, err := prune.Prune(ctx, g, prune.Options{Fit: r.fit})
	if err != nil || conflict == nil {
		return nil
	}
	return &Violation{Kind: Cycle, Cycle: conflict.Cycle, Note: "found while pruning: every resolution of a constraint closes this cycle"}
}

// writerPairs counts the pairs of writers the pipeline would order.
func writerPairs(h *history.History, include func(history.TxnID) bool) int64 {
	ix := h.Index()
	n := int64(0)
	for t := range h.Txns {
		if include(history.TxnID(t)) && len(ix.Writes(history.TxnID(t))) > 0 {
			n++
		}
	}
	return n * (n - 1) / 2
}
