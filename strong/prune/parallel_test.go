package prune_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// TestParallelPassSame: deciding the keys of a pass on two goroutines
// leaves what one does: the same conflict, and, without one, the same
// statistics, uncertain pairs, read-from sets and known edges in the
// same order, listed or pending.
func TestParallelPassSame(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	n := 2000
	if testing.Short() {
		n = 300
	}
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(53, uint64(level)))
			opt := oracle.DefaultGenOptions()
			split, conflicts := 0, 0
			for i := range n {
				h := genMixed(rng, i, opt)
				salt := rng.Uint64()
				include := func(t history.TxnID) bool { return (uint64(t)*0x9e3779b97f4a7c15^salt)&1 == 0 }
				for _, lazy := range []bool{false, true} {
					build := func() *hyperpolygraph.Graph {
						g, viol, err := hyperpolygraph.BuildContext(context.Background(), h, level, include, hyperpolygraph.BuildOptions{LazyPairs: lazy})
						require.NoError(t, err)
						if viol != nil {
							return nil
						}
						return g
					}
					one, two := build(), build()
					if one == nil {
						continue
					}
					if one.NumPairs() >= 2 {
						split++
					}
					was := prune.SetParallelPairs(1 << 62)
					st1, r1, c1, err := prune.Prune(context.Background(), one, prune.Options{})
					require.NoError(t, err)
					prune.SetParallelPairs(1)
					st2, r2, c2, err := prune.Prune(context.Background(), two, prune.Options{})
					prune.SetParallelPairs(was)
					require.NoError(t, err)
					require.Equal(t, c1, c2, "history %d: conflict", i)
					require.Equal(t, r1 == nil, r2 == nil)
					if c1 != nil {
						// After a conflict the graph is only reported on:
						// what the second goroutine decided may stay.
						conflicts++
						continue
					}
					require.Equal(t, st1, st2, "history %d: stats", i)
					require.Equal(t, one.WW, two.WW, "history %d: uncertain pairs", i)
					require.Equal(t, one.Pending, two.Pending, "history %d: pending", i)
					require.Equal(t, one.PendingFrom, two.PendingFrom, "history %d: pending from", i)
					require.Equal(t, one.WR, two.WR, "history %d: read-from sets", i)
					require.Equal(t, one.Known, two.Known, "history %d: known edges", i)
				}
			}
			t.Logf("%d graphs with pairs to split, %d conflicts", split, conflicts)
			require.Greater(t, split, n/4, "the test must split passes")
		})
	}
}
