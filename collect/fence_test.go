package collect_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/history"
)

func TestParseFences(t *testing.T) {
	f, err := collect.ParseFences("1s")
	require.NoError(t, err)
	require.Equal(t, collect.Fences{Every: time.Second}, f)
	f, err = collect.ParseFences("500")
	require.NoError(t, err)
	require.Equal(t, collect.Fences{N: 500}, f)
	for _, bad := range []string{"0", "-3", "0s", "soon", ""} {
		_, err := collect.ParseFences(bad)
		require.Error(t, err, bad)
	}
}

// Every round of fences has each session's fence, followed at once in
// its session by its fence read; a round's fence reads all read the last
// fence of the round, and each fence read the value of the one before.
func TestFenceRounds(t *testing.T) {
	w := general(t, func(c *workload.Config) { c.Sessions, c.Txns = 4, 60 })
	h, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: 2}), w,
		collect.Options{Isolation: collect.Snapshot, Fences: collect.Fences{N: 10}})
	require.NoError(t, err)
	require.Equal(t, 4*60, sum.Transactions, "fences are counted apart")
	require.Equal(t, "0", h.Meta["fence_key"])
	fk := history.KeyID(-1)
	for k := range h.NumKeys() {
		if h.Key(history.KeyID(k)) == collect.FenceKey {
			fk = history.KeyID(k)
		}
	}
	require.GreaterOrEqual(t, int(fk), 0)
	// fence key ops of a committed transaction: the value read (or -1),
	// the value written (or -1)
	ops := func(tx history.TxnID) (r, w int64) {
		r, w = -1, -1
		for _, op := range h.Txns[tx].Ops {
			if op.Key == fk && op.Kind == history.OpRead {
				r = h.Value(fk, op.Value)
			}
			if op.Key == fk && op.Kind == history.OpWrite {
				w = h.Value(fk, op.Value)
			}
		}
		return r, w
	}
	prev := map[int64]int64{} // a fence's value → the value it read
	reads := map[int]int64{}  // round → the value its fence reads read
	rounds := 1 << 30         // the rounds every session took part in
	for _, s := range h.Sessions {
		round := 0
		for i, tx := range s.Txns {
			if h.Txns[tx].Status != history.Committed {
				continue
			}
			r, wv := ops(tx)
			if r < 0 || wv < 0 {
				continue
			}
			prev[wv] = r
			round++
			require.Less(t, i+1, len(s.Txns), "a fence read follows the fence")
			g := s.Txns[i+1]
			gr, gw := ops(g)
			require.Equal(t, history.Committed, h.Txns[g].Status)
			require.Equal(t, int64(-1), gw)
			if v, ok := reads[round]; ok {
				require.Equal(t, v, gr, "round %d: the fence reads read one value", round)
			}
			reads[round] = gr
		}
		// A session joins the rounds others start (at most 10
		// transactions apart), and leaves when it has run its 60.
		require.GreaterOrEqual(t, round, 5, "session %d", s.ID)
		rounds = min(rounds, round)
	}
	// Each round's value is reached from the next round's by the chain,
	// through every session's fence of that round.
	for r := 1; r < rounds; r++ {
		n, v := 0, reads[r+1]
		for v != reads[r] {
			n++
			v = prev[v]
		}
		require.Equal(t, 4, n, "round %d: one fence of each session in the chain", r+1)
	}
}
