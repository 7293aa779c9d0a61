package apps

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRowsNumberEveryKeyOnce: a table's row index numbers each primary key
// within its bounds once, from 1 to rows(); keys outside are refused; the
// history's keys of different groups, tables and rows never meet, nor meet
// the key-value stores' data and existence keys.
func TestRowsNumberEveryKeyOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 1 + rng.IntN(3)
		pk := make([]col, n)
		for i := range pk {
			pk[i] = col{name: "k", bound: 1 + rng.Int64N(5)}
		}
		tb := newTable(1+rng.IntN(19), "t", pk, []group{{"a", []string{"x"}}, {"b", []string{"y", "z"}}})
		seen := map[int64]bool{}
		keys := map[int64]bool{}
		key := make([]int64, n)
		var walk func(i int)
		walk = func(i int) {
			if i == n {
				r, err := tb.row(key)
				require.NoError(t, err)
				require.False(t, seen[r], "row %d twice", r)
				seen[r] = true
				require.GreaterOrEqual(t, r, int64(1))
				require.LessOrEqual(t, r, tb.rows())
				for _, k := range []int64{tb.versionKey(0, r), tb.versionKey(1, r), tb.dataKey(0, r), tb.dataKey(1, r), tb.dataKey(2, r), tb.existsKey(r)} {
					require.False(t, keys[k], "key %d twice", k)
					keys[k] = true
				}
				return
			}
			for v := int64(1); v <= pk[i].bound; v++ {
				key[i] = v
				walk(i + 1)
			}
		}
		walk(0)
		require.Len(t, seen, int(tb.rows()))
		bad := make([]int64, n)
		for i := range bad {
			bad[i] = 1
		}
		i := rng.IntN(n)
		bad[i] = pk[i].bound + 1
		_, err := tb.row(bad)
		require.ErrorContains(t, err, "outside the workload's bounds")
		bad[i] = 0
		_, err = tb.row(bad)
		require.ErrorContains(t, err, "outside the workload's bounds")
		_, err = tb.row(make([]int64, n+1))
		require.ErrorContains(t, err, "key values for")
	}
}
