package robust

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// oracleLevels are the levels MixIso defines, which the oracle knows.
var oracleLevels = []history.Level{history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER}

// cases is how many random workloads a differential test tries:
// HYPERISO_ROBUST_N, else def.
func cases(t *testing.T, def int) int {
	if s := os.Getenv("HYPERISO_ROBUST_N"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "HYPERISO_ROBUST_N")
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// maxInstances is the most instances a random workload has:
// HYPERISO_ROBUST_MAX (at most 6), else 4. The oracle's cost grows as
// n!·2^(n(n-1)/2): 5 instances take about 100 times as long as 4.
var maxInstances = func() int {
	if n, err := strconv.Atoi(os.Getenv("HYPERISO_ROBUST_MAX")); err == nil && n >= 2 && n <= 6 {
		return n
	}
	return 4
}()

// randomWorkload draws 2–maxInstances transactions over 1–3 keys, each
// touching at least one key, some sharing sessions, with random levels.
func randomWorkload(r *rand.Rand) ([]otx, int) {
	n := 2 + r.IntN(maxInstances-1)
	nkeys := 1 + r.IntN(3)
	txs := make([]otx, n)
	next := map[int]int{}
	for i := range txs {
		t := &txs[i]
		for t.reads|t.writes == 0 {
			t.reads = uint8(r.IntN(1 << nkeys))
			t.writes = uint8(r.IntN(1 << nkeys))
		}
		t.level = oracleLevels[r.IntN(len(oracleLevels))]
		t.sess = -1
		if r.IntN(3) == 0 {
			t.sess = r.IntN(2)
			t.idx = next[t.sess]
			next[t.sess]++
		}
	}
	return txs, nkeys
}

// workloadOf turns oracle transactions into a Workload with the same key
// sets, sessions and levels.
func workloadOf(txs []otx, nkeys int) *Workload {
	b := newBuilder("random")
	sess := map[int][]int32{}
	for i, t := range txs {
		var reads, writes []string
		for x := range nkeys {
			if t.reads&(1<<x) != 0 {
				reads = append(reads, fmt.Sprint("k", x))
			}
			if t.writes&(1<<x) != 0 {
				writes = append(writes, fmt.Sprint("k", x))
			}
		}
		id := b.add(fmt.Sprint("T", i), "T", reads, writes, t.level)
		if t.sess >= 0 {
			sess[t.sess] = append(sess[t.sess], id)
		}
	}
	for s := range 2 {
		if len(sess[s]) > 0 {
			b.session(sess[s])
		}
	}
	return b.w
}

func describe(txs []otx, nkeys int) string {
	s := ""
	for i, t := range txs {
		s += fmt.Sprintf("\n  T%d[%s] reads %0*b writes %0*b session %d/%d", i, t.level, nkeys, t.reads, nkeys, t.writes, t.sess, t.idx)
	}
	return s
}

func withLevels(txs []otx, levels []history.Level) []otx {
	out := append([]otx(nil), txs...)
	for i := range out {
		out[i].level = levels[i]
	}
	return out
}

// TestRobustSoundAgainstOracle is the acceptance test: every allocation
// Check calls robust, and every allocation Allocate makes, has no
// execution with a cyclic dependency graph, as the oracle finds by brute
// force.
func TestRobustSoundAgainstOracle(t *testing.T) {
	n := cases(t, 20000)
	r := rand.New(rand.NewPCG(1, 2))
	var robust, oracleBadN, falseAlarm, allocWeak, refinedN int
	for c := range n {
		txs, nkeys := randomWorkload(r)
		w := workloadOf(txs, nkeys)
		rep, err := Check(w, CheckOptions{})
		require.NoError(t, err)
		ex, bad := oracleBad(txs, nkeys)
		if bad {
			oracleBadN++
		}
		if rep.Robust {
			robust++
			require.False(t, bad, "case %d: Check says robust, but an execution is not serializable: %s%s", c, ex, describe(txs, nkeys))
		} else if !bad {
			falseAlarm++
		}
		a := Allocate(w)
		arep, err := Check(w, CheckOptions{Levels: a.Levels})
		require.NoError(t, err)
		require.True(t, arep.Robust, "case %d: Check rejects Allocate's allocation %v%s", c, a.Levels, describe(txs, nkeys))
		ex, bad = oracleBad(withLevels(txs, a.Levels), nkeys)
		require.False(t, bad, "case %d: Allocate's allocation %v admits a non-serializable execution: %s%s", c, a.Levels, ex, describe(txs, nkeys))
		for _, l := range a.Levels {
			if l != history.SER {
				allocWeak++
			}
		}
		refined, lowered, err := Refine(w, a.Levels)
		require.NoError(t, err)
		rrep, err := Check(w, CheckOptions{Levels: refined})
		require.NoError(t, err)
		require.True(t, rrep.Robust, "case %d: Refine's allocation %v not robust%s", c, refined, describe(txs, nkeys))
		ex, bad = oracleBad(withLevels(txs, refined), nkeys)
		require.False(t, bad, "case %d: Refine's allocation %v admits a non-serializable execution: %s%s", c, refined, ex, describe(txs, nkeys))
		for _, l := range lowered {
			if l {
				refinedN++
			}
		}
	}
	t.Logf("%d workloads: Check robust %d, oracle non-robust %d, static false alarms %d; allocations below SER %d instances; Refine lowered %d",
		n, robust, oracleBadN, falseAlarm, allocWeak, refinedN)
}

// TestOracleSanity pins the oracle on known anomalies and on SER.
func TestRobustOracleSanity(t *testing.T) {
	const x, y = 1, 2
	at := func(l history.Level, txs ...otx) []otx {
		txs = append([]otx(nil), txs...)
		for i := range txs {
			txs[i].level, txs[i].sess = l, -1
		}
		return txs
	}
	writeSkew := []otx{{reads: x | y, writes: x}, {reads: x | y, writes: y}}
	lostUpdate := []otx{{reads: x, writes: x}, {reads: x, writes: x}}
	longFork := []otx{{writes: x}, {writes: y}, {reads: x | y}, {reads: x | y}}
	for _, c := range []struct {
		name string
		txs  []otx
		bad  bool
	}{
		{"write skew at SI", at(history.SI, writeSkew...), true},
		{"write skew at SER", at(history.SER, writeSkew...), false},
		{"lost update at PC", at(history.PC, lostUpdate...), true},
		{"lost update at PSI", at(history.PSI, lostUpdate...), false},
		{"long fork at PSI", at(history.PSI, longFork...), true},
		{"long fork at SI", at(history.SI, longFork...), false},
		{"long fork at PC", at(history.PC, longFork...), false},
	} {
		_, bad := oracleBad(c.txs, 2)
		require.Equal(t, c.bad, bad, c.name)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range cases(t, 500) {
		txs, nkeys := randomWorkload(r)
		ser := make([]history.Level, len(txs))
		for i := range ser {
			ser[i] = history.SER
		}
		ex, bad := oracleBad(withLevels(txs, ser), nkeys)
		require.False(t, bad, "all SER, yet %s%s", ex, describe(txs, nkeys))
	}
}
