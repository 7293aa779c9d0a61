package strong_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
)

// The value-sequence search (package valueseq, reached through Decide)
// agrees with the brute-force oracle and with the pipeline without it
// (strategy no-probe) at SER and SI on random one-key histories with 2 or
// 3 values, duplicate writes, sessions, aborted and unknown transactions.
// The search runs however few the writers, and the test fails unless it
// decided both ways many times.
func TestValueSeqAgreesWithOracle(t *testing.T) {
	defer strong.ValueSeqAlways()()
	n := 4000
	if testing.Short() {
		n = 800
	}
	rng := rand.New(rand.NewPCG(32, 5))
	opts := oracle.DupGenOptions()
	opts.MinKeys, opts.Keys = 1, 1
	opts.MinSessions, opts.Sessions = 1, 4
	opts.PNoise = 0.1
	counts := map[string]int{}
	for i := range n {
		opts.Values = 2 + rng.IntN(2)
		h := oracle.Generate(rng, opts)
		ser, err := oracle.Check(h, history.SER)
		require.NoError(t, err)
		si, err := oracle.Check(h, history.SI)
		require.NoError(t, err)
		// On one key SI and SER coincide (docs/valueseq.md), which is
		// what lets the search decide both.
		require.Equal(t, ser, si, "history %d: SER and SI differ on one key\n%s", i, oracle.Format(h))
		for _, level := range []history.Level{history.SER, history.SI} {
			want := ser
			res, err := check.Check(context.Background(), h, level, check.Options{})
			require.NoError(t, err)
			got := res.Verdict == check.Satisfied
			by := res.Counters["valueseq"]
			if got != want {
				t.Fatalf("history %d, %s: got %s (valueseq %d), oracle says satisfied=%v\n%s\nanomalies: %+v",
					i, level, res.Verdict, by, want, oracle.Format(h), res.Anomalies)
			}
			if got {
				checkWitness(t, h, level, res)
			}
			require.Empty(t, res.Stage, "a decided check names no stage")
			pipe, err := check.Check(context.Background(), h, level, check.Options{Strategy: strong.NoProbe.Name})
			require.NoError(t, err)
			require.Equal(t, res.Verdict, pipe.Verdict, "history %d, %s: valueseq %d\n%s", i, level, by, oracle.Format(h))
			require.Zero(t, pipe.Counters["valueseq"], "no-probe ran the search: %v %v", pipe.Counters, res.Counters)
			counts[fmt.Sprintf("%s valueseq=%d satisfied=%v", level, by, got)]++
		}
	}
	t.Logf("over %d histories: %v", n, counts)
	for _, level := range []history.Level{history.SER, history.SI} {
		require.Greater(t, counts[fmt.Sprintf("%s valueseq=1 satisfied=true", level)], n/10, level)
		require.Greater(t, counts[fmt.Sprintf("%s valueseq=2 satisfied=false", level)], n/20, level)
	}
}
