package jsonl

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIDLinesMatchesMap checks idLines against a map on ids that are
// dense, sparse, negative and huge, set in an order that makes the array
// grow over ids already in the map.
func TestIDLinesMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for round := range 50 {
		var m idLines
		ref := map[int64]int{}
		for i := range 3000 {
			var id int64
			switch rng.IntN(4) {
			case 0:
				id = int64(i)
			case 1:
				id = rng.Int64N(20000)
			case 2:
				id = -rng.Int64N(100)
			default:
				id = rng.Int64()
			}
			l, ok := m.get(id)
			rl, rok := ref[id]
			require.Equal(t, rok, ok, "round %d id %d", round, id)
			require.Equal(t, rl, l)
			if !ok {
				ref[id] = i + 1
				m.set(id, i+1)
			}
		}
	}
}
