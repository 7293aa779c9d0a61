package robust

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// requireCounterexample checks ex's history with hyperiso's checker: the
// declared levels hold, serializability does not.
func requireCounterexample(t *testing.T, w *Workload, levels []history.Level, ex *Execution) {
	t.Helper()
	h, err := ex.History(w, levels)
	require.NoError(t, err, string(ex.JSONL(w, levels)))
	ctx := context.Background()
	mixed, err := check.Check(ctx, h, history.Mixed, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, mixed.Verdict, "mixed:\n%s", ex.JSONL(w, levels))
	ser, err := check.Check(ctx, h, history.SER, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Violated, ser.Verdict, "ser:\n%s", ex.JSONL(w, levels))
}

func TestRobustConfirmFigure5(t *testing.T) {
	w, err := ReadFile("testdata/smallbank-fig5-wc-si.json")
	require.NoError(t, err)
	rep, err := Check(w, CheckOptions{})
	require.NoError(t, err)
	require.False(t, rep.Robust)
	ex, ok := Confirm(w, rep.Levels, rep.Cycles[0], Limits{Steps: 1_000_000})
	require.True(t, ok)
	requireCounterexample(t, w, rep.Levels, ex)

	w, err = ReadFile("testdata/sessions.json")
	require.NoError(t, err)
	rep, err = Check(w, CheckOptions{})
	require.NoError(t, err)
	ex, ok = Confirm(w, rep.Levels, rep.Cycles[0], Limits{Steps: 1_000_000})
	require.True(t, ok)
	requireCounterexample(t, w, rep.Levels, ex)
}

// TestConfirmAgainstOracle: every execution Confirm finds is a real
// counterexample (the oracle finds the workload non-robust, and check
// agrees on its history); and how often a non-robust workload's reported
// cycles are confirmed.
func TestRobustConfirmAgainstOracle(t *testing.T) {
	n := cases(t, 3000)
	r := rand.New(rand.NewPCG(7, 8))
	var bad, confirmed int
	for range n {
		txs, nkeys := randomWorkload(r)
		w := workloadOf(txs, nkeys)
		rep, err := Check(w, CheckOptions{MaxCycles: len(w.Instances)})
		require.NoError(t, err)
		_, oracle := oracleBad(txs, nkeys)
		if oracle {
			bad++
		}
		for _, c := range rep.Cycles {
			ex, ok := Confirm(w, rep.Levels, c, Limits{Steps: 1_000_000})
			if !ok {
				continue
			}
			require.True(t, oracle, "Confirm found an execution the oracle does not: %s", describe(txs, nkeys))
			requireCounterexample(t, w, rep.Levels, ex)
			confirmed++
			break
		}
	}
	t.Logf("%d workloads: %d not robust (oracle), %d confirmed from a reported cycle", n, bad, confirmed)
}

// TestRobustExactAgainstOracle: on workloads small enough for it, Exact
// decides, and says what the brute-force oracle says; its counterexamples
// are check's too. RefineExact's allocations are robust by the oracle.
func TestRobustExactAgainstOracle(t *testing.T) {
	n := cases(t, 3000)
	r := rand.New(rand.NewPCG(9, 10))
	var robust, lowered int
	for c := range n {
		txs, nkeys := randomWorkload(r)
		w := workloadOf(txs, nkeys)
		levels, err := LevelsOf(w, CheckOptions{})
		require.NoError(t, err)
		res := Exact(w, levels, Limits{Steps: 10_000_000})
		require.True(t, res.Decided, "case %d", c)
		_, bad := oracleBad(txs, nkeys)
		require.Equal(t, !bad, res.Robust, "case %d: Exact and the oracle disagree%s", c, describe(txs, nkeys))
		if res.Robust {
			robust++
		} else {
			requireCounterexample(t, w, levels, res.Counterexample)
		}

		a := Allocate(w)
		refined, _, err := Refine(w, a.Levels)
		require.NoError(t, err)
		exact, low := RefineExact(w, refined, Limits{Steps: 10_000_000})
		_, bad = oracleBad(withLevels(txs, exact), nkeys)
		require.False(t, bad, "case %d: RefineExact's %v is not robust%s", c, exact, describe(txs, nkeys))
		for _, l := range low {
			if l {
				lowered++
			}
		}
	}
	t.Logf("%d workloads: %d robust; RefineExact lowered %d instances below Refine", n, robust, lowered)
}
