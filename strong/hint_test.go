package strong_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
)

// The history's own order (file position, or completion time when every
// transaction is timed) only steers the solver: with it (the default
// strategy without the probe, which would settle most satisfied histories
// before the solver ran) and without it (strong.NoHint, the path before
// it) every
// history gets the same verdict and a witness that replays. The histories
// are larger than the oracle's, with few keys, so that the solver has
// version orders to decide; half carry random real-time intervals (a hint
// that is mostly wrong), a quarter intervals in file order; without
// --realtime intervals are no constraint.
func TestHintAgreesWithUnhinted(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(14, 3))
	opts := oracle.DefaultGenOptions()
	opts.MinTxns, opts.Txns = 8, 40
	opts.Sessions, opts.Keys, opts.Values = 8, 4, 6
	dup := oracle.DupGenOptions()
	dup.MinTxns, dup.Txns, dup.Sessions, dup.Keys = 8, 30, 6, 3
	counts := map[string]int{}
	for i := range n {
		o := opts
		if i%3 == 2 {
			o = dup
		}
		h := oracle.Generate(rng, o)
		switch i % 4 {
		case 1, 2:
			randomIntervals(rng, h)
		case 3: // the file's order, as an interleaved file would give
			for x := 1; x < len(h.Txns); x++ {
				h.Txns[x].Start, h.Txns[x].End, h.Txns[x].Timed = int64(x), int64(x), true
			}
		}
		for _, level := range []history.Level{history.SER, history.SI} {
			res := agreeOn(t, i, h, level, strong.NoProbe, strong.NoHint)
			counts[fmt.Sprintf("%s=%s", level, res.Verdict)]++
		}
	}
	t.Logf("verdicts over %d histories: %v", n, counts)
}
