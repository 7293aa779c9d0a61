package strong_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/strong/acyclic"
)

// testStrategies adds the lazy strategies without preprocessing, so that
// pruning and the width-two clauses are checked against the plain search.
// Only veristrong keeps the history-order probe: in the others it would
// settle most satisfied histories before the part they test ran.
func testStrategies() []strong.Strategy {
	out := append([]strong.Strategy(nil), strong.Strategies...)
	for i := range out[1:] {
		out[1+i].Probe = false
	}
	raw := out[1] // no-probe
	raw.Name += "/raw"
	raw.Prune, raw.TwoWidth = false, false
	return append(out, raw)
}

func TestStrongAgreesWithOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	rng := rand.New(rand.NewPCG(7, 11))
	opts := oracle.DefaultGenOptions()
	strategies := testStrategies()
	counts := map[string]int{}
	for i := range n {
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			want, err := oracle.Check(h, level)
			require.NoError(t, err)
			for _, s := range strategies {
				saved := strong.Strategies
				strong.Strategies = []strong.Strategy{s}
				res, err := check.Check(context.Background(), h, level, check.Options{})
				strong.Strategies = saved
				require.NoError(t, err)
				got := res.Verdict == check.Satisfied
				if got != want {
					t.Fatalf("history %d, %s, strategy %s: got %s, oracle says satisfied=%v\n%s\nanomalies: %+v",
						i, level, s.Name, res.Verdict, want, oracle.Format(h), res.Anomalies)
				}
				if got {
					checkWitness(t, h, level, res)
				}
			}
			counts[fmt.Sprintf("%s=%v", level, want)]++
		}
	}
	t.Logf("verdicts over %d histories: %v", n, counts)
}

// checkWitness replays a witness independently of the checker: for SER a
// serial execution in which every external read returns the latest write
// before it; for SI a commit order where every transaction reads the latest
// writes of its snapshot (a prefix that holds its session predecessors and
// every earlier transaction writing a key it writes). Every committed
// transaction appears and session order is respected.
func checkWitness(t *testing.T, h *history.History, level history.Level, res *check.Result) {
	t.Helper()
	byID := map[int64]history.TxnID{}
	for tx := 1; tx < len(h.Txns); tx++ {
		byID[h.Txns[tx].ID] = history.TxnID(tx)
	}
	order := make([]history.TxnID, len(res.Witness))
	pos := map[history.TxnID]int{}
	for i, r := range res.Witness {
		tx, ok := byID[r.ID]
		require.True(t, ok)
		order[i], pos[tx] = tx, i
	}
	finalWrites := func(tx history.TxnID) map[history.KeyID]history.ValueID {
		w := map[history.KeyID]history.ValueID{}
		for _, op := range h.Txns[tx].Ops {
			if op.Kind.IsWrite() {
				w[op.Key] = op.Value
			}
		}
		return w
	}
	for i, tx := range order {
		visible := i // SER: everything before
		if level == history.SI {
			require.NotNil(t, res.Witness[i].Snapshot)
			visible = *res.Witness[i].Snapshot
			require.LessOrEqual(t, visible, i)
		}
		state := finalWrites(history.InitTxn)
		for _, u := range order[:visible] {
			for k, v := range finalWrites(u) {
				state[k] = v
			}
		}
		mine := finalWrites(tx)
		for _, u := range order[visible:i] {
			for k := range finalWrites(u) {
				_, conflict := mine[k]
				require.False(t, conflict, "%s does not see %s, which wrote a key it writes", h.TxnString(tx), h.TxnString(u))
			}
		}
		written := map[history.KeyID]bool{}
		for _, op := range h.Txns[tx].Ops {
			if op.Kind.IsWrite() {
				written[op.Key] = true
				continue
			}
			if written[op.Key] {
				continue
			}
			cur, ok := state[op.Key]
			require.True(t, ok && cur == op.Value, "witness: %s reads key %d = %d, but its snapshot holds %d",
				h.TxnString(tx), h.Key(op.Key), h.Value(op.Key, op.Value), cur)
		}
		sess := h.Txns[tx].Session
		for _, prev := range h.Sessions[sess].Txns[:h.Txns[tx].Index] {
			if p, ok := pos[prev]; ok {
				require.Less(t, p, visible, "%s does not see its session predecessor %s", h.TxnString(tx), h.TxnString(prev))
			}
		}
	}
	for tx := 1; tx < len(h.Txns); tx++ {
		if h.Txns[tx].Status == history.Committed {
			_, ok := pos[history.TxnID(tx)]
			require.True(t, ok, "committed %s missing from the witness", h.TxnString(history.TxnID(tx)))
		}
	}
}

// PSI and PC (by their default strategies: the lazy search with PSI's
// cycle test, the CDCL(T) solver on PC's state graph) agree with MixIso's
// axioms (the mixed oracle at one level) on random
// histories, duplicate values and unknown-status transactions included; a
// satisfied PC check's witness replays as SI's does, bar the no-conflict
// rule PC lacks.
func TestPSIAndPCAgreeWithOracle(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, c := range []struct {
		level    history.Level
		serFirst bool
	}{{history.PSI, false}, {history.PC, false}, {history.PSI, true}, {history.PC, true}} {
		level := c.level
		strong.SERFirst = c.serFirst
		defer func() { strong.SERFirst = true }()
		rng := rand.New(rand.NewPCG(3, 17))
		opts := oracle.DupGenOptions()
		opts.MinTxns, opts.Txns = 3, 5
		counts := map[bool]int{}
		siFirst := 0
		for i := range n {
			h := oracle.Generate(rng, opts)
			want, err := oracle.Mixed(h, level)
			require.NoError(t, err)
			res, err := check.Check(context.Background(), h, level, check.Options{})
			require.NoError(t, err)
			got := res.Verdict == check.Satisfied
			if got != want {
				t.Fatalf("history %d at %s: got %s, MixIso says satisfied=%v\n%s\nanomalies: %+v", i, level, res.Verdict, want, oracle.Format(h), res.Anomalies)
			}
			if got && level == history.PC {
				checkPrefixWitness(t, h, res)
			}
			if got && level == history.PSI {
				checkPSIWitness(t, h, res, fmt.Sprintf("history %d", i))
			}
			counts[want]++
			if res.Counters["si_first"] == 1 {
				siFirst++
			}
		}
		require.Positive(t, counts[true])
		require.Positive(t, counts[false])
		if c.serFirst {
			require.Greater(t, siFirst, n/200, "%s: SI first decided too rarely to be tested", level)
		}
		t.Logf("%s (SER first: %v) verdicts: %v, decided by SI first: %d", level, c.serFirst, counts, siFirst)
	}
}

// PC's strategies, the CDCL(T) solver on the state graph and the lazy
// search, agree with each other and with MixIso's axioms on histories with
// duplicate values and unknown-status transactions, without the SER-first
// shortcut so that each search runs; each witness replays.
func TestPCStrategiesAgree(t *testing.T) {
	var runs []mixIsoRun
	for _, st := range strong.PCStrategies {
		runs = append(runs, mixIsoRun{strategy: st.Name, budget: acyclic.PSIBudget})
	}
	strategiesAgreeWithMixIso(t, history.PC, 23, runs, func(t *testing.T, h *history.History, res *check.Result, _ string) {
		checkPrefixWitness(t, h, res)
	})
	_, err := strong.Decide(context.Background(), nil, history.PC, strong.Options{Strategy: "veristrong"})
	require.ErrorContains(t, err, "pc is decided by the strategies cdcl-pc, lazy-gini-pc")
}

// mixIsoRun is one strategy run of strategiesAgreeWithMixIso, with the PSI
// theory's search budget it runs under.
type mixIsoRun struct {
	strategy string
	budget   int
}

// strategiesAgreeWithMixIso checks 3,000 random small histories with
// duplicate values and unknown-status transactions (PCG seed 5, seed) at
// level with each run, without the SER-first shortcut: every verdict must
// be MixIso's, both verdicts must occur, and each satisfied result's
// witness must replay.
func strategiesAgreeWithMixIso(t *testing.T, level history.Level, seed uint64, runs []mixIsoRun, replay func(t *testing.T, h *history.History, res *check.Result, what string)) {
	t.Helper()
	strong.SERFirst = false
	defer func() { strong.SERFirst = true }()
	budget := acyclic.PSIBudget
	defer func() { acyclic.PSIBudget = budget }()
	rng := rand.New(rand.NewPCG(5, seed))
	opts := oracle.DupGenOptions()
	opts.MinTxns, opts.Txns = 3, 6
	counts := map[bool]int{}
	probed := map[string]int{}
	for i := range 3000 {
		// Half the histories carry the intervals of their simulated
		// execution, so that the default strategies' probe is tried.
		opts.Times = i%2 == 0
		h := oracle.Generate(rng, opts)
		if !slices.ContainsFunc(h.Txns[1:], func(tx history.Txn) bool { return tx.Status != history.Aborted }) {
			continue // nothing to check
		}
		want, err := oracle.Mixed(h, level)
		require.NoError(t, err)
		for _, run := range runs {
			acyclic.PSIBudget = run.budget
			res, err := check.Check(context.Background(), h, level, check.Options{Strategy: run.strategy})
			require.NoError(t, err)
			if got := res.Verdict == check.Satisfied; got != want {
				t.Fatalf("history %d, strategy %s (budget %d): got %s, MixIso says satisfied=%v\n%s\nanomalies: %+v",
					i, run.strategy, run.budget, res.Verdict, want, oracle.Format(h), res.Anomalies)
			}
			if want {
				replay(t, h, res, fmt.Sprintf("history %d, strategy %s", i, run.strategy))
			}
			if p, ok := res.Counters["order_probe"]; ok {
				probed[fmt.Sprintf("%s probe=%d", run.strategy, p)]++
			}
		}
		counts[want]++
	}
	require.Positive(t, counts[true])
	require.Positive(t, counts[false])
	t.Logf("verdicts: %v, probe: %v", counts, probed)
	first := runs[0].strategy
	require.Greater(t, probed[first+" probe=1"], 100, "%s: the probe decided too rarely to be tested", first)
	require.Greater(t, probed[first+" probe=0"], 100, "%s: the probe failed too rarely", first)
}

// checkPrefixWitness replays a PC witness: each transaction's external
// reads return the latest writes among the first Snapshot transactions of
// the order, which holds its session predecessors.
func checkPrefixWitness(t *testing.T, h *history.History, res *check.Result) {
	t.Helper()
	byID := map[int64]history.TxnID{}
	for tx := 1; tx < len(h.Txns); tx++ {
		byID[h.Txns[tx].ID] = history.TxnID(tx)
	}
	order := make([]history.TxnID, len(res.Witness))
	pos := map[history.TxnID]int{}
	for i, r := range res.Witness {
		order[i], pos[byID[r.ID]] = byID[r.ID], i
	}
	for i, tx := range order {
		require.NotNil(t, res.Witness[i].Snapshot)
		visible := *res.Witness[i].Snapshot
		require.LessOrEqual(t, visible, i)
		state := map[history.KeyID]history.ValueID{}
		for _, u := range append([]history.TxnID{history.InitTxn}, order[:visible]...) {
			for _, op := range h.Txns[u].Ops {
				if op.Kind.IsWrite() {
					state[op.Key] = op.Value
				}
			}
		}
		touched := map[history.KeyID]bool{}
		for _, op := range h.Txns[tx].Ops {
			if !touched[op.Key] && !op.Kind.IsWrite() {
				require.Equal(t, state[op.Key], op.Value, "witness: %s reads key %d", h.TxnString(tx), h.Key(op.Key))
			}
			touched[op.Key] = true
		}
		for _, prev := range h.Sessions[h.Txns[tx].Session].Txns[:h.Txns[tx].Index] {
			if p, ok := pos[prev]; ok {
				require.Less(t, p, visible, "%s does not see its session predecessor", h.TxnString(tx))
			}
		}
	}
}

// The anomalies that place PSI and PC: a long fork is allowed by PSI (SI
// forbids it) but not PC; a lost update by PC but not PSI, which names it;
// write skew by both.
func TestPSIAndPCOnShippedHistories(t *testing.T) {
	for _, c := range []struct {
		file    string
		pc, psi check.Verdict
	}{
		{"long-fork.jsonl", check.Violated, check.Satisfied},
		{"write-skew.jsonl", check.Satisfied, check.Satisfied},
		{"lost-update.jsonl", check.Satisfied, check.Violated},
	} {
		f, err := os.Open(filepath.Join("..", "testdata", "strong", c.file))
		require.NoError(t, err)
		h, err := jsonl.Parse(f, c.file, jsonl.Options{})
		f.Close()
		require.NoError(t, err)
		res, err := check.Check(context.Background(), h, history.PC, check.Options{})
		require.NoError(t, err)
		require.Equal(t, c.pc, res.Verdict, "PC on %s", c.file)
		res, err = check.Check(context.Background(), h, history.PSI, check.Options{})
		require.NoError(t, err)
		require.Equal(t, c.psi, res.Verdict, "PSI on %s", c.file)
		if c.psi == check.Violated {
			require.Equal(t, "lost-update", res.Anomalies[0].Type)
		} else {
			require.NotEmpty(t, res.Witness)
		}
		si, err := check.Check(context.Background(), h, history.SI, check.Options{})
		require.NoError(t, err)
		if c.file == "long-fork.jsonl" {
			require.Equal(t, check.Violated, si.Verdict, "SI forbids the long fork PSI allows")
		}
	}
	_, err := strong.Decide(context.Background(), nil, history.PSI, strong.Options{Strategy: "veristrong"})
	require.ErrorContains(t, err, "psi is decided by the strategies cdcl-psi, lazy-gini-psi")
}

// PSI's strategies, the CDCL(T) solver with PSI's theory and the lazy
// search, agree with each other and with MixIso's axioms on histories with
// duplicate values and unknown-status transactions, without the SER-first
// shortcut so that each search runs; each witness (a commit order) replays
// against the axioms, the visible sets found by brute force. The solver
// runs twice: with the theory's bounded checks, and with their budget at 0
// so that every G edge is left to the re-check of full assignments.
func TestPSIStrategiesAgree(t *testing.T) {
	budget := acyclic.PSIBudget
	strategiesAgreeWithMixIso(t, history.PSI, 29,
		[]mixIsoRun{{"cdcl-psi", budget}, {"cdcl-psi", 0}, {"lazy-gini-psi", budget}}, checkPSIWitness)
	_, err := strong.Decide(context.Background(), nil, history.PSI, strong.Options{Strategy: "cdcl-pc"})
	require.ErrorContains(t, err, "psi is decided by the strategies cdcl-psi, lazy-gini-psi")
}

// checkPSIWitness replays a PSI witness against MixIso's axioms: the order
// is AR, and each transaction's visible set is searched by brute force
// (oracle.MixedWitness, every transaction held to PSI).
func checkPSIWitness(t *testing.T, h *history.History, res *check.Result, what string) {
	t.Helper()
	byID := map[int64]history.TxnID{}
	for tx := 1; tx < len(h.Txns); tx++ {
		byID[h.Txns[tx].ID] = history.TxnID(tx)
	}
	order := make([]history.TxnID, len(res.Witness))
	snaps := make([]int, len(res.Witness))
	for i, r := range res.Witness {
		tx, ok := byID[r.ID]
		require.True(t, ok)
		order[i], snaps[i] = tx, -1
	}
	ok, err := oracle.MixedWitness(h, history.PSI, order, snaps)
	require.NoError(t, err)
	require.True(t, ok, "%s: the witness %v breaks PSI's axioms\n%s", what, order, oracle.Format(h))
}

// SI first: on histories simulated at snapshot isolation (many not
// serializable), PC and PSI checks that SI's pipeline settles agree with
// MixIso's axioms, and their witnesses replay (PC's with SI's snapshots,
// PSI's as a commit order).
func TestSIFirstAgreesWithOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 31))
	opts := oracle.DupGenOptions()
	opts.MinTxns, opts.Txns = 3, 6
	opts.Mode = oracle.SimSnapshot
	decided := map[history.Level]int{}
	for i := range 6000 {
		h := oracle.Generate(rng, opts)
		if !slices.ContainsFunc(h.Txns[1:], func(tx history.Txn) bool { return tx.Status != history.Aborted }) {
			continue // nothing to check
		}
		for _, level := range []history.Level{history.PC, history.PSI} {
			want, err := oracle.Mixed(h, level)
			require.NoError(t, err)
			res, err := check.Check(context.Background(), h, level, check.Options{})
			require.NoError(t, err)
			if got := res.Verdict == check.Satisfied; got != want {
				t.Fatalf("history %d at %s: got %s, MixIso says satisfied=%v\n%s", i, level, res.Verdict, want, oracle.Format(h))
			}
			if res.Counters["si_first"] != 1 {
				continue
			}
			decided[level]++
			if level == history.PC {
				checkPrefixWitness(t, h, res)
			} else {
				checkPSIWitness(t, h, res, fmt.Sprintf("history %d", i))
			}
		}
	}
	// Mixes of the levels SI implies, on the same kind of histories.
	pool := []history.Level{history.SI, history.PSI, history.PC, history.CC, history.RA, history.RC}
	for i := range 6000 {
		h := oracle.Generate(rng, opts)
		if !slices.ContainsFunc(h.Txns[1:], func(tx history.Txn) bool { return tx.Status != history.Aborted }) {
			continue
		}
		for x := 1; x < len(h.Txns); x++ {
			h.Txns[x].Level = pool[rng.IntN(len(pool))]
		}
		want, err := oracle.Mixed(h, history.LevelNone)
		require.NoError(t, err)
		res, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
		require.NoError(t, err)
		if got := res.Verdict == check.Satisfied; got != want {
			t.Fatalf("mixed history %d: got %s, MixIso says satisfied=%v\n%s", i, res.Verdict, want, oracle.Format(h))
		}
		if res.Counters["si_first"] == 1 {
			decided[history.Mixed]++
			replayWitness(t, h, fmt.Sprintf("mixed history %d", i))
		}
	}
	t.Logf("decided by SI first: %v", decided)
	require.Greater(t, decided[history.PC], 150)
	require.Greater(t, decided[history.PSI], 150)
	require.Greater(t, decided[history.Mixed], 150)
}
