package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// TestHierarchyOnRandomHistories: on random histories with duplicate
// values and unknown-status transactions, every level is decided (no
// unknown verdict) and a satisfied level implies every weaker one
// (SER ⇒ SI ⇒ PC, PSI ⇒ CC ⇒ RA ⇒ RC), through check.Check itself: each
// level's engine, not the oracle.
func TestHierarchyOnRandomHistories(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	levels := []history.Level{history.SER, history.SI, history.PC, history.PSI, history.CC, history.RA, history.RC}
	rng := rand.New(rand.NewPCG(23, 5))
	opt := oracle.DupGenOptions()
	opt.PUnknown = 0.3
	patterns := map[string]int{}
	sat := map[history.Level]int{}
	for i := range n {
		h := oracle.Generate(rng, opt)
		res := map[history.Level]*Result{}
		key := ""
		for _, l := range levels {
			r, err := Check(context.Background(), h, l, Options{})
			require.NoError(t, err, "history %d at %s", i, l)
			require.NotEqual(t, Unknown, r.Verdict, "history %d at %s: %s\n%s", i, l, r.Reason, oracle.Format(h))
			res[l] = r
			if r.Verdict == Satisfied {
				sat[l]++
			}
			key += fmt.Sprintf("%s=%c ", l, r.Verdict.String()[0])
		}
		checkHierarchy(t, fmt.Sprintf("history %d\n%s", i, oracle.Format(h)), res)
		patterns[key]++
	}
	// Both verdicts at every level, or the implication tests nothing.
	for _, l := range levels {
		require.True(t, sat[l] > n/50 && sat[l] < n-n/50, "%s satisfied on %d of %d histories", l, sat[l], n)
	}
	t.Logf("%d verdict patterns over %d histories; satisfied per level %v", len(patterns), n, sat)
}
