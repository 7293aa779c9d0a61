package history

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValTableMatchesMap checks the interning table against a Go map on
// random pairs, including clustered keys and extreme values.
func TestValTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	type pair struct {
		k   KeyID
		val int64
	}
	ref := map[pair]ValueID{}
	var tab valTable
	extremes := []int64{0, -1, 1, 1 << 62, -1 << 63, 1<<63 - 1}
	for i := range 200000 {
		p := pair{KeyID(rng.IntN(300)), rng.Int64N(2000) - 1000}
		switch i % 7 {
		case 0:
			p.val = extremes[rng.IntN(len(extremes))]
		case 1:
			p.k = KeyID(rng.Int32())
			p.val = rng.Int64()
		}
		want, ok := ref[p]
		got, gok := tab.get(p.k, p.val)
		require.Equal(t, ok, gok, "%v", p)
		if ok {
			require.Equal(t, want, got, "%v", p)
			continue
		}
		v := ValueID(len(ref))
		ref[p] = v
		tab.put(p.k, p.val, v)
	}
	require.Equal(t, len(ref), tab.n)
	for p, v := range ref {
		got, ok := tab.get(p.k, p.val)
		require.True(t, ok)
		require.Equal(t, v, got)
	}
}
