package strong

import (
	"context"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// BuildGraph builds the hyper-polygraph Decide solves for the transactions
// include admits: the version orders the observed lists state, and real
// time at strict SER or when realTime is set. A read no admitted
// transaction wrote, or a cycle of the stated version orders, is returned
// as the Violation instead.
func BuildGraph(ctx context.Context, h *history.History, level history.Level, include func(history.TxnID) bool, realTime bool, fit func(int64, string) error) (*hyperpolygraph.Graph, *Violation, error) {
	return buildGraph(ctx, h, level, include, realTime, fit, false)
}

// buildGraph is BuildGraph, with the version-order pairs left pending
// (BuildOptions.LazyPairs) when lazy is set: for a graph pruned next.
func buildGraph(ctx context.Context, h *history.History, level history.Level, include func(history.TxnID) bool, realTime bool, fit func(int64, string) error, lazy bool) (*hyperpolygraph.Graph, *Violation, error) {
	graphLevel := level
	if level == history.StrictSER || level == history.PSI || level == history.PC {
		graphLevel = history.SER // one state per transaction
	}
	g, viol, err := hyperpolygraph.BuildContext(ctx, h, graphLevel, include, hyperpolygraph.BuildOptions{Fit: fit, LazyPairs: lazy})
	if err != nil {
		return nil, nil, err
	}
	if viol != nil {
		return nil, &Violation{Kind: UnwrittenRead, Reader: viol.Reader, Read: viol.Read}, nil
	}
	if hints := h.HintsAt(level); len(hints) > 0 {
		if cyc := g.ApplyVersionHints(hints); cyc != nil {
			return g, &Violation{Kind: Cycle, Cycle: cyc, Note: "the version orders the observed lists state form a cycle"}, nil
		}
	}
	if level == history.StrictSER || realTime {
		g.AddRealTime()
	}
	return g, nil, nil
}

// Conflict is what Refute found: a constraint every option of which
// closes a cycle with the known graph (prune.Conflict).
type Conflict = prune.Conflict

// Refute prunes g in place, as Decide does before encoding, and returns
// the conflict that refutes it, or nil when pruning alone leaves it
// possible. explain splits cases on what pruning leaves open.
func Refute(ctx context.Context, g *hyperpolygraph.Graph) (*Conflict, error) {
	_, _, conf, err := prune.Prune(ctx, g, prune.Options{})
	return conf, err
}
