package strong_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
	"github.com/hyperiso/hyperiso/verdict"
)

// mixable are the levels a transaction of a mixed history may declare.
var mixable = []history.Level{history.RC, history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER}

// assignLevels gives every transaction of h a level: all the same (kind
// 0), or drawn from two or three levels (kinds 1 and 2).
func assignLevels(rng *rand.Rand, h *history.History, kind int) string {
	pool := []history.Level{mixable[rng.IntN(len(mixable))]}
	for len(pool) < kind+1 {
		l := mixable[rng.IntN(len(mixable))]
		dup := false
		for _, p := range pool {
			dup = dup || p == l
		}
		if !dup {
			pool = append(pool, l)
		}
	}
	for t := 1; t < len(h.Txns); t++ {
		h.Txns[t].Level = pool[rng.IntN(len(pool))]
	}
	return fmt.Sprint(pool)
}

func mixedGenOptions() oracle.GenOptions {
	o := oracle.DupGenOptions()
	o.MinTxns, o.Txns = 3, 5
	return o
}

// check --level mixed agrees with MixIso's axioms decided by brute force
// (oracle.Mixed, RC extended as docs/mixed.md says) on random tiny
// histories: uniform, two-level and three-level mixes, with duplicate
// values, aborted and unknown-status transactions.
func TestMixedAgreesWithOracle(t *testing.T) {
	agreeWithOracle(t, 10000, mixedGenOptions(), 16, false)
}

// With the SER shortcut on, as the CLI runs it.
func TestMixedAgreesWithOracleSERFirst(t *testing.T) {
	agreeWithOracle(t, 3000, mixedGenOptions(), 18, true)
}

// The same on fewer, larger histories (six or seven transactions), where
// visibility reaches further: through a PSI writer's earlier writers into
// a prefix-level snapshot, for one.
func TestMixedAgreesWithOracleLarger(t *testing.T) {
	o := mixedGenOptions()
	o.MinTxns, o.Txns = 6, 7
	o.PAbort, o.PUnknown = 0.02, 0.05
	agreeWithOracle(t, 1000, o, 17, false)
}

// Half the transactions of unknown status: the solver decides which
// committed, and each model's mixed test sees exactly those it takes.
func TestMixedAgreesWithOracleManyUnknown(t *testing.T) {
	o := mixedGenOptions()
	o.PAbort, o.PUnknown = 0.05, 0.5
	agreeWithOracle(t, 10000, o, 19, false)
	o.MinTxns, o.Txns = 6, 7
	agreeWithOracle(t, 2000, o, 20, false)
}

// agreeWithOracle compares n random histories; serFirst says whether the
// SER shortcut may decide satisfied ones (off, the mixed search decides
// every one).
func agreeWithOracle(t *testing.T, n int, opts oracle.GenOptions, seed uint64, serFirst bool) {
	saved := strong.SERFirst
	strong.SERFirst = serFirst
	defer func() { strong.SERFirst = saved }()
	rng := rand.New(rand.NewPCG(seed, 2))
	counts := map[string]int{}
	for i := range n {
		// Half the histories carry their simulated execution's
		// intervals, so that the history-order probe is tried.
		opts.Times = i%2 == 1
		h := oracle.Generate(rng, opts)
		kind := i % 3
		pool := assignLevels(rng, h, kind)
		want, err := oracle.Mixed(h, history.LevelNone)
		if err != nil {
			t.Fatal(err)
		}
		res, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
		if errors.Is(err, check.ErrInput) && h.Stats().Committed+h.Stats().Unknown == 0 {
			continue // nothing to check: every transaction aborted
		}
		if err != nil {
			t.Fatalf("history %d %s: %v\n%s", i, pool, err, oracle.Format(h))
		}
		if res.Verdict == check.Unknown {
			t.Fatalf("history %d %s: unknown: %s", i, pool, res.Reason)
		}
		if got := res.Verdict == check.Satisfied; got != want {
			t.Fatalf("history %d %s: got %s, the oracle says consistent=%v\n%s\nanomalies: %+v", i, pool, res.Verdict, want, oracle.Format(h), res.Anomalies)
		}
		if want {
			replayWitness(t, h, fmt.Sprintf("history %d %s", i, pool))
		}
		counts[fmt.Sprintf("kind%d=%v", kind, want)]++
		if p, ok := res.Counters["order_probe"]; ok {
			counts[fmt.Sprintf("probe=%d", p)]++
		}
		if res.Counters["si_first"] == 1 {
			counts["si_first"]++
		}
	}
	t.Logf("%v", counts)
}

// replayWitness checks the engine's witness of a satisfied mixed history
// against MixIso's axioms: its AR and the prefix levels' snapshots fixed,
// the other visible sets searched by brute force (oracle.MixedWitness).
func replayWitness(t *testing.T, h *history.History, what string) {
	t.Helper()
	out, err := strong.Decide(context.Background(), h, history.Mixed, strong.Options{})
	if err != nil || out.Verdict != verdict.Satisfied {
		t.Fatalf("%s: Decide: %v %v", what, out.Verdict, err)
	}
	ok, err := oracle.MixedWitness(h, history.LevelNone, out.Order, out.Snapshots)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("%s: the witness %v snapshots %v breaks the axioms\n%s", what, out.Order, out.Snapshots, oracle.Format(h))
	}
}

// A uniform history checked as mixed (every transaction at the default
// level) gets the verdict of the level's own check.
func TestMixedUniformIsTheLevel(t *testing.T) {
	strong.SERFirst = false
	defer func() { strong.SERFirst = true }()
	rng := rand.New(rand.NewPCG(3, 16))
	counts := map[string]int{}
	for i := range 1500 {
		h := oracle.Generate(rng, mixedGenOptions())
		if h.Stats().Committed+h.Stats().Unknown == 0 {
			continue
		}
		for _, l := range mixable {
			want, err := check.Check(context.Background(), h, l, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := check.Check(context.Background(), h, history.Mixed, check.Options{DefaultLevel: l})
			if err != nil {
				t.Fatal(err)
			}
			if want.Verdict == check.Unknown {
				// The weak checkers give up on some ambiguous unknown-status
				// transactions; the brute-force definition decides.
				ok, err := oracle.Mixed(h, l)
				if err != nil {
					t.Fatal(err)
				}
				want.Verdict = check.Violated
				if ok {
					want.Verdict = check.Satisfied
				}
			}
			if got.Verdict != want.Verdict {
				t.Fatalf("history %d at %s: mixed says %s, --level %s says %s\n%s", i, l, got.Verdict, l, want.Verdict, oracle.Format(h))
			}
			counts[fmt.Sprintf("%s=%s", l, want.Verdict)]++
		}
	}
	t.Logf("%v", counts)
	for _, l := range mixable {
		if counts[l.String()+"=satisfied"] == 0 || counts[l.String()+"=violated"] == 0 {
			t.Fatalf("%s: one verdict only: %v", l, counts)
		}
	}
}

// Raising one transaction's level never turns a violated history into a
// satisfied one (MixIso, Theorem 3.4, per transaction).
func TestMixedRaisingALevel(t *testing.T) {
	strong.SERFirst = false
	defer func() { strong.SERFirst = true }()
	rng := rand.New(rand.NewPCG(4, 16))
	raised := 0
	for i := range 3000 {
		h := oracle.Generate(rng, mixedGenOptions())
		if h.Stats().Committed+h.Stats().Unknown == 0 {
			continue
		}
		assignLevels(rng, h, 1+i%2)
		res, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.Violated {
			continue
		}
		tx := 1 + rng.IntN(len(h.Txns)-1)
		was := h.Txns[tx].Level
		var up []history.Level
		for _, l := range mixable {
			if l != was && l.AtLeast(was) {
				up = append(up, l)
			}
		}
		if len(up) == 0 {
			continue
		}
		h.Txns[tx].Level = up[rng.IntN(len(up))]
		res2, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res2.Verdict != check.Violated {
			t.Fatalf("history %d: violated with %s at %s, %s at %s\n%s", i, h.TxnString(history.TxnID(tx)), was, res2.Verdict, h.Txns[tx].Level, oracle.Format(h))
		}
		raised++
	}
	if raised < 300 {
		t.Fatalf("only %d violated histories raised", raised)
	}
	t.Logf("%d violated histories stayed violated with one transaction raised", raised)
}
