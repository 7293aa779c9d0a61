package robust

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

func share(t *testing.T, kind string, seed uint64) map[history.Level]int {
	w, err := Generate(kind, GenOptions{Seed: seed})
	require.NoError(t, err)
	a := Allocate(w)
	rep, err := Check(w, CheckOptions{Levels: a.Levels})
	require.NoError(t, err)
	require.True(t, rep.Robust, kind)
	out := map[history.Level]int{}
	for _, l := range a.Levels {
		out[l]++
	}
	return out
}

// TestGeneratedShares pins the shares that do not depend on the draw
// (§7.2): SmallBank 20 % PC, Courseware 40 % RA and 20 % PC, TPC-C 92 %
// PSI, 4 % RA, 4 % PC; the rest PSI or SER.
func TestRobustGeneratedShares(t *testing.T) {
	for seed := range uint64(5) {
		sb := share(t, "smallbank", seed)
		require.Equal(t, 200, sb[history.PC])
		require.Equal(t, 800, sb[history.PSI]+sb[history.SER])
		require.Less(t, sb[history.SER], 200)
		cw := share(t, "courseware", seed)
		require.Equal(t, 400, cw[history.RA])
		require.Equal(t, 200, cw[history.PC])
		require.Equal(t, 400, cw[history.PSI]+cw[history.SER])
		tp := share(t, "tpcc", seed)
		require.Equal(t, map[history.Level]int{history.PSI: 920, history.RA: 40, history.PC: 40}, tp)
		t.Logf("seed %d: smallbank %v courseware %v", seed, sb, cw)
	}
}

func TestRobustGenerateSeeded(t *testing.T) {
	for _, kind := range Generators {
		a, err := Generate(kind, GenOptions{Seed: 7, Instances: 50})
		require.NoError(t, err)
		b, err := Generate(kind, GenOptions{Seed: 7, Instances: 50})
		require.NoError(t, err)
		require.Equal(t, a, b, kind)
		require.Len(t, a.Instances, 50, kind)
	}
	_, err := Generate("nope", GenOptions{})
	require.ErrorContains(t, err, "unknown generator")
}
