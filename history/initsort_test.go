package history

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInitWritesSortedByKey: Finish puts T⊥'s writes in the
// order a comparison sort of their raw keys gives, for keys small and
// large, negative, sharing digits or not, and named.
func TestInitWritesSortedByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 300 {
		b := NewBuilder("x", "test")
		n := rng.IntN(600)
		key := func() int64 {
			switch i % 4 {
			case 0:
				return int64(rng.IntN(1000))
			case 1:
				return int64(rng.Uint64())
			case 2:
				return int64(rng.IntN(600)) - 300
			}
			return int64(rng.IntN(4))<<40 | int64(rng.IntN(3))<<8 | int64(rng.IntN(5))<<56
		}
		tx := b.Begin(b.Session(1), 1, Committed, Pos{})
		for range n {
			if rng.IntN(20) == 0 {
				k := b.KeyNamed(string(rune('a' + rng.IntN(26))))
				b.WriteID(tx, k, b.ValueNamed(k, "v"))
				continue
			}
			b.InitWrite(key(), int64(rng.IntN(3)))
		}
		b.InitAllKeys(7)
		h := b.Finish()
		got := h.Txns[InitTxn].Ops
		want := slices.Clone(got)
		slices.SortFunc(want, func(x, y Op) int { return cmp.Compare(h.Keys[x.Key], h.Keys[y.Key]) })
		require.Equal(t, want, got)
		require.Len(t, got, len(h.Keys))
	}
}
