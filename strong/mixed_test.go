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
	n := 10000
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(16, 2))
	counts := map[string]int{}
	for i := range n {
		h := oracle.Generate(rng, mixedGenOptions())
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
		counts[fmt.Sprintf("kind%d=%v", kind, want)]++
	}
	t.Logf("%v", counts)
}
