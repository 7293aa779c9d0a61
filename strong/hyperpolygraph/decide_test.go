package hyperpolygraph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// TestDecideDerivesAsDeriveRW: settling constraints one by one on a clone
// adds exactly the WW or WR edge chosen and anti-dependencies that
// DeriveRW also derives from the known edges, and leaves the original
// graph as it was.
func TestDecideDerivesAsDeriveRW(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	decided := 0
	for i := range 2000 {
		o := oracle.DefaultGenOptions()
		if i%2 == 1 {
			o = oracle.DupGenOptions()
		}
		h := oracle.Generate(rng, o)
		g, viol := Build(h, history.SER, nil)
		if viol != nil {
			continue
		}
		known, ww, wr := len(g.Known), len(g.WW), len(g.WR)
		reads := make([][]Read, len(g.Reads))
		for k := range g.Reads {
			reads[k] = slices.Clone(g.Reads[k])
		}
		c := g.Clone()
		for step := 0; step < 4 && len(c.WW)+len(c.WR) > 0; step++ {
			before := len(c.Known)
			var e Edge
			if len(c.WR) > 0 && (len(c.WW) == 0 || rng.IntN(2) == 0) {
				j := rng.IntN(len(c.WR[0].Cands))
				want := c.WR[0].Cands[j]
				e = c.DecideWR(0, j)
				require.Equal(t, Edge{From: want, To: e.To, Rel: history.WR, Key: e.Key}, e)
			} else {
				p := c.WW[0]
				e = c.DecideWW(0, rng.IntN(2) == 0)
				require.ElementsMatch(t, []history.TxnID{p.A, p.B}, []history.TxnID{e.From, e.To})
			}
			decided++
			require.Equal(t, e, c.Known[before], "history %d: the chosen edge joins Known first", i)
			var base []Edge
			for _, k := range c.Known {
				if k.Rel != history.RW {
					base = append(base, k)
				}
			}
			derived := c.DeriveRW(base)
			for _, rw := range c.Known[before+1:] {
				require.Equal(t, history.RW, rw.Rel)
				require.True(t, slices.Contains(derived, rw), "history %d: %v is not derived", i, rw)
			}
		}
		require.Equal(t, []int{known, ww, wr}, []int{len(g.Known), len(g.WW), len(g.WR)}, "history %d: the original changed", i)
		require.Equal(t, reads, g.Reads, "history %d: the original's reads changed", i)
	}
	require.Greater(t, decided, 1000)
}
