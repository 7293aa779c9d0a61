package robust

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestRobustChainProofAgainstOracle: whatever chainProof calls robust the
// brute-force oracle does too. The workloads are drawn near the proof's
// shape (closed writers at PSI, SI or SER, readers at any level, few
// sessions), so that it answers often, including where the static
// criterion does not.
func TestRobustChainProofAgainstOracle(t *testing.T) {
	n := cases(t, 4000)
	r := rand.New(rand.NewPCG(13, 14))
	closed := []history.Level{history.PSI, history.SI, history.SER}
	var proved, beyondStatic int
	for c := range n {
		k := 3 + r.IntN(maxInstances-2)
		nkeys := 2 + r.IntN(2)
		txs := make([]otx, k)
		for i := range txs {
			tx := &txs[i]
			tx.sess = -1
			for tx.reads|tx.writes == 0 {
				if r.IntN(2) == 0 {
					tx.writes = uint8(r.IntN(1 << nkeys))
					tx.reads = tx.writes & uint8(r.IntN(1<<nkeys))
					tx.level = closed[r.IntN(len(closed))]
					if r.IntN(8) == 0 {
						tx.reads |= uint8(r.IntN(1 << nkeys)) // not closed
					}
				} else {
					tx.reads = uint8(r.IntN(1 << nkeys))
					tx.level = oracleLevels[r.IntN(len(oracleLevels))]
				}
			}
			if r.IntN(20) == 0 {
				tx.level = oracleLevels[r.IntN(len(oracleLevels))]
			}
			if r.IntN(20) == 0 {
				tx.sess, tx.idx = 0, i
			}
		}
		w := workloadOf(txs, nkeys)
		levels, err := LevelsOf(w, CheckOptions{})
		require.NoError(t, err)
		all := make([]int32, len(txs))
		for i := range all {
			all[i] = int32(i)
		}
		if !newIndex(w).chainProof(levels, all) {
			continue
		}
		proved++
		ex, bad := oracleBad(txs, nkeys)
		require.False(t, bad, "case %d: chainProof says robust, the oracle finds %s%s", c, ex, describe(txs, nkeys))
		rep, err := Check(w, CheckOptions{})
		require.NoError(t, err)
		if !rep.Robust {
			beyondStatic++
		}
	}
	t.Logf("%d workloads: chainProof proved %d robust, %d of them not statically robust", n, proved, beyondStatic)
	require.Greater(t, beyondStatic, 0)
}
