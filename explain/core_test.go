package explain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
)

// noisy returns lines plus n unrelated transactions: chains of
// read-modify-writes of their own keys, and readers of the final values.
func noisy(lines []string, n int) *history.History {
	for i := range n {
		k := 100 + i%7
		lines = append(lines, fmt.Sprintf(`{"session":%d,"id":%d,"ops":[["r",%d,%d],["w",%d,%d]]}`, 10+i%7, 100+i, k, i/7, k, i/7+1))
	}
	h, err := jsonl.Parse(strings.NewReader(strings.Join(lines, "\n")), "noisy", jsonl.Options{})
	if err != nil {
		panic(err)
	}
	return h
}

func ids(h *history.History, ts []history.TxnID) []int64 {
	var out []int64
	for _, t := range ts {
		out = append(out, h.Txns[t].ID)
	}
	return out
}

// TestCoreFindsTheAnomaly: the UNSAT core over per-transaction assumptions
// singles out the transactions of the anomaly among many others, at SER
// and at SI.
func TestCoreFindsTheAnomaly(t *testing.T) {
	cases := []struct {
		level history.Level
		lines []string
		want  []int64
	}{
		{history.SER, []string{ // write skew
			`{"session":1,"id":1,"ops":[["r",1,0],["r",2,0],["w",1,1]]}`,
			`{"session":2,"id":2,"ops":[["r",1,0],["r",2,0],["w",2,1]]}`,
		}, []int64{1, 2}},
		{history.SI, []string{ // long fork: two rw edges, not adjacent
			`{"session":1,"id":1,"ops":[["w",1,1]]}`,
			`{"session":2,"id":2,"ops":[["w",2,1]]}`,
			`{"session":3,"id":3,"ops":[["r",1,1],["r",2,0]]}`,
			`{"session":4,"id":4,"ops":[["r",1,0],["r",2,1]]}`,
		}, []int64{1, 2, 3, 4}},
		{history.SI, []string{ // lost update through a chain of writers
			`{"session":1,"id":1,"ops":[["w",1,1]]}`,
			`{"session":2,"id":2,"ops":[["r",1,1],["w",1,2]]}`,
			`{"session":3,"id":3,"ops":[["r",1,1],["w",1,3]]}`,
		}, []int64{1, 2, 3}},
	}
	for _, c := range cases {
		h := noisy(c.lines, 40)
		keep := make([]bool, len(h.Txns))
		for i := range keep {
			keep[i] = true
		}
		core := strong.Core(context.Background(), h, c.level, keep)
		require.Equal(t, c.want, ids(h, core), "%s", c.level)
		// The core alone is violating.
		k := make([]bool, len(h.Txns))
		k[0] = true
		for _, t := range core {
			k[t] = true
		}
		res, err := check.Check(context.Background(), NewSub(h, k, nil).H, c.level, check.Options{})
		require.NoError(t, err)
		require.Equal(t, check.Violated, res.Verdict)
		// Without the anomaly there is no core.
		for _, t := range core {
			keep[t] = false
		}
		require.Empty(t, strong.Core(context.Background(), h, c.level, keep))
	}
}

// TestCoreIsMinimal: on random violated histories, the core alone violates
// the level and dropping any one of its transactions satisfies it, so no
// transaction of the core is left untried by the deletion loop.
func TestCoreIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	opt := oracle.GenOptions{MinSessions: 3, Sessions: 5, MinTxns: strong.CoreMinTxns, Txns: 20, MinOps: 1, MaxOps: 5,
		MinKeys: 2, Keys: 5, Values: 6, PRead: 0.5, Mode: oracle.SimVisible}
	checked := 0
	sizes := map[int]int{}
	for i := 0; checked < 400 && i < 20000; i++ {
		h := oracle.Generate(rng, opt)
		level := []history.Level{history.SER, history.SI}[i%2]
		keep := make([]bool, len(h.Txns))
		for j := range keep {
			keep[j] = true
		}
		core := strong.Core(context.Background(), h, level, keep)
		if len(core) == 0 {
			continue
		}
		verdict := func(drop history.TxnID) check.Verdict {
			k := make([]bool, len(h.Txns))
			k[0] = true
			for _, c := range core {
				k[c] = c != drop
			}
			res, err := check.Check(context.Background(), NewSub(h, k, nil).H, level, check.Options{})
			require.NoError(t, err)
			return res.Verdict
		}
		require.Equal(t, check.Violated, verdict(-1), "history %d at %s: core %v alone", i, level, core)
		for _, c := range core {
			require.Equal(t, check.Satisfied, verdict(c), "history %d at %s: core %v without T%d", i, level, core, c)
		}
		sizes[len(core)]++
		checked++
	}
	t.Logf("%d cores checked, by size %v", checked, sizes)
	require.GreaterOrEqual(t, checked, 20, "too few violated histories with a core")
}
