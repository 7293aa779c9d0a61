package prune_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// genScale makes a history like the scale bench's, smaller: sessions
// taking turns at random in a serial store, ops operations a transaction,
// half reads, unique written values.
func genScale(rng *rand.Rand, txns, sessions, keys, ops int) *history.History {
	b := history.NewBuilder("scale", "test")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	store := make([]int64, keys)
	next := int64(1)
	for i := range txns {
		id := b.Begin(b.Session(int64(rng.IntN(sessions))), int64(i+1), history.Committed, history.Pos{})
		for range ops {
			x := rng.IntN(keys)
			if rng.IntN(2) == 0 {
				b.Read(id, int64(x), store[x])
				continue
			}
			store[x] = next
			b.Write(id, int64(x), next)
			next++
		}
	}
	return b.Finish()
}

// TestBudgetCoversPruning: what pruning allocates is asked of the budget
// first (within a small margin: maps and per-key scratch are not asked),
// and a budget too small for it stops Prune with ErrTooLarge, the graph
// left consistent. With the pairs pending, each key's are asked as
// pruning lists them.
func TestBudgetCoversPruning(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		for _, level := range []history.Level{history.SER, history.SI} {
			name := level.String()
			if lazy {
				name += "/lazy"
			}
			t.Run(name, func(t *testing.T) { budgetCovers(t, level, lazy) })
		}
	}
}

func budgetCovers(t *testing.T, level history.Level, lazy bool) {
	h := genScale(rand.New(rand.NewPCG(5, 5)), 3000, 20, 300, 10)
	build := func() *hyperpolygraph.Graph {
		g, viol, err := hyperpolygraph.BuildContext(context.Background(), h, level, nil, hyperpolygraph.BuildOptions{LazyPairs: lazy})
		require.NoError(t, err)
		require.Nil(t, viol)
		return g
	}
	g := build()
	var asked int64
	fit := func(need int64, what string) error {
		asked += need
		return nil
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st, r, c, err := prune.Prune(context.Background(), g, prune.Options{Fit: fit})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Nil(t, c)
	require.NotNil(t, r)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d pairs, %d known edges after %d passes: %d bytes allocated, %d asked", st.WWBefore, st.KnownAfter, st.Passes, allocated, asked)
	require.LessOrEqual(t, allocated, asked+asked/10+256<<10, "pruning allocates more than it asks the budget for")

	// A budget of a tenth of what was asked refuses.
	g = build()
	ww := g.NumPairs()
	left := asked / 10
	var refused string
	fit = func(need int64, what string) error {
		if left -= need; left < 0 {
			refused = what
			return errors.New("no room")
		}
		return nil
	}
	_, r, c, err = prune.Prune(context.Background(), g, prune.Options{Fit: fit})
	require.ErrorIs(t, err, prune.ErrTooLarge)
	require.Nil(t, r)
	require.Nil(t, c)
	require.Contains(t, refused, "pruning's")
	require.LessOrEqual(t, g.NumPairs(), ww)
}
