package strong

import (
	"context"
	"fmt"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// BuildGraph builds the hyper-polygraph Decide solves for the transactions
// include admits: the version orders the observed lists state, and real
// time where the level's row has it or realTime is set. A read no admitted
// transaction wrote, or a cycle of the stated version orders, is returned
// as the Violation instead.
func BuildGraph(ctx context.Context, h *history.History, level history.Level, include func(history.TxnID) bool, realTime bool, fit func(int64, string) error) (*hyperpolygraph.Graph, *Violation, error) {
	g, _, viol, err := buildGraph(ctx, h, level, include, realTime, fit, false)
	return g, viol, err
}

// buildGraph is BuildGraph, with the version-order pairs left pending
// (BuildOptions.LazyPairs) when lazy is set: for a graph pruned next. rt
// is the number of real-time edges added.
func buildGraph(ctx context.Context, h *history.History, level history.Level, include func(history.TxnID) bool, realTime bool, fit func(int64, string) error, lazy bool) (g *hyperpolygraph.Graph, rt int, _ *Violation, _ error) {
	p, ok := planFor(level)
	if !ok {
		return nil, 0, nil, fmt.Errorf("strong: level %s is not decided here", level)
	}
	g, viol, err := hyperpolygraph.BuildContext(ctx, h, p.graph, include, hyperpolygraph.BuildOptions{Fit: fit, LazyPairs: lazy})
	if err != nil {
		return nil, 0, nil, err
	}
	if viol != nil {
		return nil, 0, &Violation{Kind: UnwrittenRead, Reader: viol.Reader, Read: viol.Read}, nil
	}
	if hints := h.HintsAt(level); len(hints) > 0 {
		if cyc := g.ApplyVersionHints(hints); cyc != nil {
			return g, 0, &Violation{Kind: Cycle, Cycle: cyc, Note: "the version orders the observed lists state form a cycle"}, nil
		}
	}
	if row, _ := level.Row(); row.RealTime || realTime {
		rt = len(g.AddRealTime())
	}
	return g, rt, nil, nil
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
