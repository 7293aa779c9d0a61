package hyperpolygraph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// Build derives the RW edges of T⊥'s version orders key by key, without
// DeriveRW's map of every read; they must be DeriveRW's, in its order, on
// random histories with duplicate values (uncertain reads, which derive
// nothing yet) and unknown outcomes (some taken, some not).
func TestBuildDerivesAsDeriveRW(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	derived := 0
	for i := range 3000 {
		o := oracle.DefaultGenOptions()
		if i%2 == 1 {
			o = oracle.DupGenOptions()
		}
		h := oracle.Generate(rng, o)
		include := func(x history.TxnID) bool { return x%2 == 0 }
		for _, level := range []history.Level{history.SER, history.SI} {
			g, viol := Build(h, level, include)
			if viol != nil {
				continue
			}
			first := slices.IndexFunc(g.Known, func(e Edge) bool { return e.Rel == history.RW })
			if first < 0 {
				first = len(g.Known)
			}
			for _, e := range g.Known[first:] {
				require.Equal(t, history.RW, e.Rel, "history %d: RW edges come last", i)
			}
			want := g.DeriveRW(g.Known[:first])
			if len(want) == 0 {
				want = nil
			}
			got := slices.Clone(g.Known[first:])
			if len(got) == 0 {
				got = nil
			}
			require.Equal(t, want, got, "history %d, %s", i, level)
			derived += len(got)
		}
	}
	require.Greater(t, derived, 10000)
}
