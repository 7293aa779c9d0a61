package strong

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/verdict"
)

// TestCycleAroundOptional: a refuting cycle names an optional transaction
// only by an edge of its reads or writes, never passes it by session order
// alone; the shortened cycle is still closed.
func TestCycleAroundOptional(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	opts := oracle.DupGenOptions()
	opts.PUnknown = 0.6
	seen := 0
	for range 3000 {
		h := oracle.Generate(rng, opts)
		plan, viol := planUnknown(h, history.SER)
		if viol != nil || plan.nOpt == 0 {
			continue
		}
		for _, level := range []history.Level{history.SER, history.SI} {
			out, err := Decide(context.Background(), h, level, Options{})
			require.NoError(t, err)
			if out.Verdict != verdict.Violated || out.Violation.Kind != Cycle {
				continue
			}
			cyc := out.Violation.Cycle
			data := map[history.TxnID]bool{}
			for i, e := range cyc {
				require.Equal(t, e.To, cyc[(i+1)%len(cyc)].From, "not a closed cycle: %+v", cyc)
				if e.Rel != history.SO && e.Rel != history.RT {
					data[e.From], data[e.To] = true, true
				}
			}
			for _, e := range cyc {
				if plan.optional[e.From] {
					seen++
					require.True(t, data[e.From], "optional %s passed by session order: %+v\n%s", h.TxnString(e.From), cyc, oracle.Format(h))
				}
			}
		}
	}
	require.Positive(t, seen)
}

func TestAroundOptional(t *testing.T) {
	so := func(a, b history.TxnID) hyperpolygraph.Edge {
		return hyperpolygraph.Edge{From: a, To: b, Rel: history.SO, Key: -1}
	}
	rw := hyperpolygraph.Edge{From: 4, To: 1, Rel: history.RW, Key: 0}
	opt := []bool{false, false, true, true, false}
	got := aroundOptional([]hyperpolygraph.Edge{so(1, 2), so(2, 3), so(3, 4), rw}, opt)
	require.Equal(t, []hyperpolygraph.Edge{so(1, 4), rw}, got)
	// The step around the cycle's end.
	got = aroundOptional([]hyperpolygraph.Edge{so(3, 4), rw, so(1, 2), so(2, 3)}, opt)
	require.Equal(t, []hyperpolygraph.Edge{rw, so(1, 4)}, got)
}

// planUnknown decides which unknown-status transactions take part: those
// some certain read cannot do without are forced in, those no read can use
// stay out, and the rest are optional. An unknown transaction that is
// itself inconsistent at level cannot have committed, nor can one with a
// read that nothing that may have committed wrote.
func planUnknown(h *history.History, level history.Level) (*unknownPlan, *Violation) {
	return planUnknownAt(h, func(history.TxnID) history.Level { return level })
}
