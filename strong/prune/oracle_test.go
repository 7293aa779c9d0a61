package prune_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong/hyperpolygraph"
	"github.com/hyperiso/hyperiso/strong/prune"
)

// TestAgainstOracle checks the brute force of these tests, and the pruning
// verdicts, against the definitional oracle on its own random histories
// (without unknown-status transactions, which the oracle would try both
// ways). It runs checkSound on them too.
func TestAgainstOracle(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	opt := oracle.DefaultGenOptions()
	opt.PUnknown = 0
	for _, level := range []history.Level{history.SER, history.SI} {
		t.Run(level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 1))
			var c tally
			agree, sat := 0, 0
			for range n {
				h := oracle.Generate(rng, opt)
				want, err := oracle.Check(h, level)
				require.NoError(t, err)
				forbidden := false
				for _, f := range h.Validate() {
					forbidden = forbidden || f.Kind.ForbiddenAt(level)
				}
				g, viol := hyperpolygraph.Build(h, level, nil)
				if viol == nil && space(g, spaceLimit) <= spaceLimit {
					got := !forbidden && len(acyclicSet(g, originOf(g))) > 0
					require.Equal(t, want, got, "oracle and brute force disagree on\n%s", oracle.Format(h))
					agree++
					_, _, conf, err := prune.Prune(context.Background(), g, prune.Options{})
					require.NoError(t, err)
					require.False(t, want && conf != nil, "pruning found a conflict in a satisfiable history\n%s", oracle.Format(h))
				} else if viol != nil {
					require.False(t, want)
				}
				if want {
					sat++
				}
				checkSound(t, h, level, &c)
				if t.Failed() {
					return
				}
			}
			t.Logf("%d compared with the oracle (%d satisfy %v); %v", agree, sat, level, c)
		})
	}
}
