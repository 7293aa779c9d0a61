package prune_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// TestIncrementalCPU compares, on the history named by PRUNE_FILE (at
// PRUNE_LEVEL, ser or si), the process CPU time of pruning with the
// incremental fill and pair skipping and without, alternating the two
// (run with -v -run IncrementalCPU). It is skipped without PRUNE_FILE.
func TestIncrementalCPU(t *testing.T) {
	path := os.Getenv("PRUNE_FILE")
	if path == "" {
		t.Skip("PRUNE_FILE not set")
	}
	level := history.SI
	if os.Getenv("PRUNE_LEVEL") == "ser" {
		level = history.SER
	}
	h, err := formats.Read(path, formats.Options{})
	require.NoError(t, err)
	var on, off []time.Duration
	for i := range 14 {
		inc := i%2 == 0
		if o := os.Getenv("PRUNE_ONLY"); o != "" {
			inc = o == "on"
		}
		g, viol, err := hyperpolygraph.BuildContext(context.Background(), h, level, nil, hyperpolygraph.BuildOptions{LazyPairs: true})
		require.NoError(t, err)
		require.Nil(t, viol)
		was := prune.SetIncremental(inc)
		c0 := cpu()
		st, _, _, err := prune.Prune(context.Background(), g, prune.Options{})
		d := cpu() - c0
		prune.SetIncremental(was)
		require.NoError(t, err)
		if i < 2 {
			t.Logf("incremental %v: %d passes, WW %d→%d", inc, st.Passes, st.WWBefore, st.WWAfter)
			continue // warm-up
		}
		if inc {
			on = append(on, d)
		} else {
			off = append(off, d)
		}
	}
	if len(on) == 0 || len(off) == 0 {
		return // PRUNE_ONLY: for a profile
	}
	slices.Sort(on)
	slices.Sort(off)
	t.Logf("prune CPU ms, median of %d: incremental %.1f, full %.1f (ratio %.2f)", len(on), ms(on[len(on)/2]), ms(off[len(off)/2]), float64(on[len(on)/2])/float64(off[len(off)/2]))
}
