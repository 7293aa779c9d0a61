package robust

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
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
		exact, low, _ := RefineExact(w, refined, Limits{Steps: 10_000_000})
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

// randomLevels draws a level per transaction among the oracle's.
func randomLevels(r *rand.Rand, n int) []history.Level {
	out := make([]history.Level, n)
	for i := range out {
		out[i] = oracleLevels[r.IntN(len(oracleLevels))]
	}
	return out
}

// TestRobustSATAgainstOracle: the SAT encoding of a whole small workload
// (no decomposition into components) finds a non-serializable execution
// exactly when the brute-force oracle does, and check confirms each one.
// One encoding answers several allocations under assumptions, as
// RefineExact asks it, so what it learns for one allocation must not leak
// into the next. Workloads have 2–maxInstances instances, then exactly 5.
func TestRobustSATAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, size := range []struct{ n, max int }{{cases(t, 3000), maxInstances}, {cases(t, 100), 5}} {
		var bad, queries int
		for c := range size.n {
			txs, nkeys := randomWorkloadN(r, size.max)
			for size.max == 5 && len(txs) < 5 {
				txs, nkeys = randomWorkloadN(r, 5) // exactly 5
			}
			w := workloadOf(txs, nkeys)
			all := make([]int32, len(w.Instances))
			for i := range all {
				all[i] = int32(i)
			}
			g := newSATGroup(w, all, 0)
			for q := range 3 {
				levels := randomLevels(r, len(txs))
				if q == 0 {
					levels, _ = LevelsOf(w, CheckOptions{})
				}
				queries++
				ex, decided := g.solve(levels, Limits{})
				require.True(t, decided)
				_, oracle := oracleBad(withLevels(txs, levels), nkeys)
				require.Equal(t, oracle, ex != nil, "case %d query %d, levels %v: SAT and the oracle disagree%s", c, q, levels, describe(txs, nkeys))
				if ex != nil {
					bad++
					requireCounterexample(t, w, levels, ex)
				}
			}
		}
		t.Logf("up to %d instances: %d workloads, %d allocations asked, %d not robust", size.max, size.n, queries, bad)
	}
}

// TestRobustSATRestriction: on workloads too large for the oracle (8–16
// instances), every counterexample the SAT search finds is check's, and
// when it finds none, no subset closed under session predecessors has one
// either (by the oracle on 3–4 instances, and by the SAT search itself):
// restricting an execution keeps it non-serializable, so a robust
// workload has only robust parts.
func TestRobustSATRestriction(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := cases(t, 300)
	var robust int
	for c := range n {
		txs, nkeys := randomBig(r, 8+r.IntN(9))
		w := workloadOf(txs, nkeys)
		levels, err := LevelsOf(w, CheckOptions{})
		require.NoError(t, err)
		all := make([]int32, len(w.Instances))
		for i := range all {
			all[i] = int32(i)
		}
		ex, decided := newSATGroup(w, all, 0).solve(levels, Limits{})
		require.True(t, decided)
		if ex != nil {
			requireCounterexample(t, w, levels, ex)
			continue
		}
		robust++
		for range 5 {
			sub := subsetWithPreds(r, w, 3+r.IntN(2))
			stx := make([]otx, 0, len(sub))
			for _, i := range sub {
				stx = append(stx, txs[i])
			}
			if len(sub) <= 5 {
				_, bad := oracleBad(stx, nkeys)
				require.False(t, bad, "case %d: robust by SAT, but the oracle finds the part %v not robust%s", c, sub, describe(txs, nkeys))
			}
			sex, _ := newSATGroup(w, sub, 0).solve(levels, Limits{})
			require.Nil(t, sex, "case %d: robust by SAT, but not its part %v", c, sub)
		}
	}
	t.Logf("%d workloads of 8–16 instances: %d robust", n, robust)
}

// randomWorkloadN is randomWorkload with up to max instances.
func randomWorkloadN(r *rand.Rand, max int) ([]otx, int) {
	old := maxInstances
	maxInstances = max
	defer func() { maxInstances = old }()
	return randomWorkload(r)
}

// randomBig draws n transactions over 3–6 keys touching one or two keys
// each, so that components stay sparse enough to be robust at times,
// mostly at PSI and above, in up to 3 sessions.
func randomBig(r *rand.Rand, n int) ([]otx, int) {
	nkeys := 3 + r.IntN(4)
	levels := []history.Level{history.RA, history.CC, history.PC, history.PSI, history.PSI, history.SI, history.SI, history.SER, history.SER, history.SER, history.SER}
	txs := make([]otx, n)
	next := map[int]int{}
	for i := range txs {
		t := &txs[i]
		for t.reads|t.writes == 0 {
			for range 1 + r.IntN(2) {
				k := uint8(1) << r.IntN(nkeys)
				switch r.IntN(3) {
				case 0:
					t.reads |= k
				case 1:
					t.writes |= k
				default:
					t.reads |= k
					t.writes |= k
				}
			}
		}
		t.level = levels[r.IntN(len(levels))]
		t.sess = -1
		if r.IntN(4) == 0 {
			t.sess = r.IntN(3)
			t.idx = next[t.sess]
			next[t.sess]++
		}
	}
	return txs, nkeys
}

// subsetWithPreds draws about k instances and closes them under session
// predecessors.
func subsetWithPreds(r *rand.Rand, w *Workload, k int) []int32 {
	set := map[int32]bool{}
	for range k {
		for q := int32(r.IntN(len(w.Instances))); q >= 0 && !set[q]; q = w.prev(q) {
			set[q] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestRobustRefineExactBenchmarkParts: RefineExact's allocations of the
// SmallBank and Courseware generators (components of up to a few dozen
// instances, beyond the oracle) hold on every part the oracle can take:
// connected sets of 2–4 instances grown along the static graph, which a
// non-serializable execution of the part would contradict (restriction).
func TestRobustRefineExactBenchmarkParts(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, kind := range []string{"smallbank", "courseware"} {
		w, err := Generate(kind, GenOptions{Seed: 3, Instances: 300, Keys: 150})
		require.NoError(t, err)
		refined, _, err := Refine(w, Allocate(w).Levels)
		require.NoError(t, err)
		levels, low, _ := RefineExact(w, refined, Limits{})
		x := newIndex(w)
		parts, lowered := 0, 0
		for _, l := range low {
			if l {
				lowered++
			}
		}
		for range cases(t, 1000) {
			part := grow(r, x, 2+r.IntN(3))
			txs, nkeys, ok := oracleTxs(w, part, levels)
			if !ok {
				continue
			}
			parts++
			_, bad := oracleBad(txs, nkeys)
			require.False(t, bad, "%s: RefineExact's allocation is not robust on %v%s", kind, part, describe(txs, nkeys))
		}
		t.Logf("%s: %d lowered by RefineExact, %d parts checked by the oracle", kind, lowered, parts)
	}
}

// grow draws a random instance and adds random static neighbours (an
// instance sharing a key with one already in) up to k instances.
func grow(r *rand.Rand, x *index, k int) []int32 {
	set := map[int32]bool{int32(r.IntN(len(x.w.Instances))): true}
	for tries := 0; len(set) < k && tries < 20; tries++ {
		from := slices.Sorted(maps.Keys(set))[r.IntN(len(set))]
		p := &x.w.Instances[from]
		keys := append(slices.Clone(p.Reads), p.Writes...)
		key := keys[r.IntN(len(keys))]
		cand := append(slices.Clone(x.readers[key]), x.writers[key]...)
		set[cand[r.IntN(len(cand))]] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// oracleTxs turns instances without sessions into oracle transactions over
// the keys they share with another of them (a key only one touches makes
// no dependency); false when that is more than 8 keys.
func oracleTxs(w *Workload, part []int32, levels []history.Level) ([]otx, int, bool) {
	count := map[KeyID]int{}
	for _, i := range part {
		p := &w.Instances[i]
		for _, k := range sortedSet(append(slices.Clone(p.Reads), p.Writes...)) {
			count[k]++
		}
	}
	idx := map[KeyID]int{}
	for _, k := range slices.Sorted(maps.Keys(count)) {
		if count[k] > 1 {
			idx[k] = len(idx)
		}
	}
	if len(idx) > 8 {
		return nil, 0, false
	}
	var txs []otx
	for _, i := range part {
		p := &w.Instances[i]
		t := otx{level: levels[i], sess: -1}
		for _, k := range p.Reads {
			if b, ok := idx[k]; ok {
				t.reads |= 1 << b
			}
		}
		for _, k := range p.Writes {
			if b, ok := idx[k]; ok {
				t.writes |= 1 << b
			}
		}
		if classOf(t.level) == classSER {
			t.level = history.SER
		}
		txs = append(txs, t)
	}
	return txs, len(idx), true
}
