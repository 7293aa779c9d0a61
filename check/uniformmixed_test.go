package check_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
)

// TestUniformMixedIsItsLevel: the mixed engine, given a history whose
// transactions all declare one level, gives that level's verdict (which is
// why a mixed check of one weak level tries that level first), and so
// does the mixed check.
func TestUniformMixedIsItsLevel(t *testing.T) {
	n := 300
	if s := os.Getenv("HYPERISO_UNIFORM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewPCG(61, 3))
	opts := oracle.DefaultGenOptions()
	levels := []history.Level{history.RC, history.RA, history.CC, history.PC, history.PSI, history.SI, history.SER}
	seen := map[string]int{}
	for i := range n {
		h := oracle.Generate(rng, opts)
		for _, l := range levels {
			for x := range h.Txns {
				h.Txns[x].Level = l
			}
			want, err := check.Check(context.Background(), h, l, check.Options{})
			require.NoError(t, err)
			was := check.SetUniformShortcut(false)
			got, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
			check.SetUniformShortcut(was)
			require.NoError(t, err)
			require.Equal(t, want.Verdict, got.Verdict, "history %d at %s, mixed engine:\n%s", i, l, oracle.Format(h))
			got, err = check.Check(context.Background(), h, history.Mixed, check.Options{})
			require.NoError(t, err)
			require.Equal(t, want.Verdict, got.Verdict, "history %d at %s, mixed check:\n%s", i, l, oracle.Format(h))
			require.Equal(t, "mixed", got.Level)
			seen[l.String()+" "+want.Verdict.String()]++
		}
	}
	t.Logf("%v", seen)
}
