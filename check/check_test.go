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

// testStrategies adds the lazy strategies without preprocessing, so that
// pruning and the width-two clauses are checked against the plain search.
func testStrategies() []Strategy {
	out := append([]Strategy(nil), Strategies...)
	for _, s := range Strategies[:1] {
		raw := s
		raw.Name += "/raw"
		raw.Prune, raw.TwoWidth = false, false
		noTW := s
		noTW.Name += "/no-2width"
		noTW.TwoWidth = false
		out = append(out, raw, noTW)
	}
	return out
}

func TestStrongAgreesWithOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	rng := rand.New(rand.NewPCG(7, 11))
	opts := oracle.DefaultGenOptions()
	strategies := testStrategies()
	counts := map[string]int{}
	for i := range n {
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			want, err := oracle.Check(h, level)
			require.NoError(t, err)
			for _, s := range strategies {
				saved := Strategies
				Strategies = []Strategy{s}
				res, err := Check(context.Background(), h, level, Options{})
				Strategies = saved
				require.NoError(t, err)
				got := res.Verdict == Satisfied
				if got != want {
					t.Fatalf("history %d, %s, strategy %s: got %s, oracle says satisfied=%v\n%s\nanomalies: %+v",
						i, level, s.Name, res.Verdict, want, oracle.Format(h), res.Anomalies)
				}
				if got {
					checkWitness(t, h, level, res)
				}
			}
			counts[fmt.Sprintf("%s=%v", level, want)]++
		}
	}
	t.Logf("verdicts over %d histories: %v", n, counts)
}

// checkWitness replays a SER witness order serially: session order is
// respected, every committed transaction appears, and every external read
// returns the latest write before it.
func checkWitness(t *testing.T, h *history.History, level history.Level, res *Result) {
	t.Helper()
	if level != history.SER {
		return
	}
	byID := map[int64]history.TxnID{}
	for tx := 1; tx < len(h.Txns); tx++ {
		byID[h.Txns[tx].ID] = history.TxnID(tx)
	}
	pos := map[history.TxnID]int{}
	state := map[history.KeyID]history.ValueID{}
	for _, op := range h.Txns[history.InitTxn].Ops {
		state[op.Key] = op.Value
	}
	for i, r := range res.Witness {
		tx, ok := byID[r.ID]
		require.True(t, ok)
		pos[tx] = i
		written := map[history.KeyID]history.ValueID{}
		for _, op := range h.Txns[tx].Ops {
			if op.Kind.IsWrite() {
				written[op.Key] = op.Value
				continue
			}
			if _, own := written[op.Key]; own {
				continue
			}
			cur, ok := state[op.Key]
			require.True(t, ok && cur == op.Value, "witness: %s reads key %d = %d, but the serial state holds %d",
				h.TxnString(tx), h.Key(op.Key), h.Value(op.Key, op.Value), cur)
		}
		for k, v := range written {
			state[k] = v
		}
	}
	for _, s := range h.Sessions {
		last := -1
		for _, tx := range s.Txns {
			p, ok := pos[tx]
			if h.Txns[tx].Status == history.Committed {
				require.True(t, ok, "committed transaction %d missing from the witness", h.Txns[tx].ID)
			}
			if ok {
				require.Greater(t, p, last, "witness breaks session order")
				last = p
			}
		}
	}
}
