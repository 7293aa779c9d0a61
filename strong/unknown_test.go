package strong_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
	"github.com/hyperiso/hyperiso/internal/oracle"
	"github.com/hyperiso/hyperiso/strong"
)

// unknownHeavy returns generator options where most transactions are of
// unknown status and many values repeat, so that the solver decides most
// transactions' inclusion.
func unknownHeavy() oracle.GenOptions {
	o := oracle.DupGenOptions()
	o.PAbort, o.PUnknown = 0.05, 0.6
	return o
}

// TestUnknownsAgreeWithOracle: with unknown-status transactions decided by
// inclusion literals, every strategy agrees with the brute-force oracle
// (which tries every subset) at SER and SI, never answers unknown, and a
// satisfied check's witness replays with exactly the unknown transactions
// it lists taken as committed.
func TestUnknownsAgreeWithOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	rng := rand.New(rand.NewPCG(15, 2))
	opts := unknownHeavy()
	strategies := []strong.Strategy{}
	for _, name := range []string{"veristrong", "no-prune", "lazy-gini"} {
		s, err := strong.Find(history.SER, name)
		require.NoError(t, err)
		strategies = append(strategies, s)
	}
	counts := map[string]int{}
	for i := range n {
		h := oracle.Generate(rng, opts)
		for _, level := range []history.Level{history.SER, history.SI} {
			want, err := oracle.Check(h, level)
			require.NoError(t, err)
			for _, s := range strategies {
				res := checkWith(t, h, level, s)
				got := res.Verdict == check.Satisfied
				if got != want || res.Verdict == check.Unknown {
					t.Fatalf("history %d, %s, strategy %s: got %s, oracle says satisfied=%v\n%s\nanomalies: %+v",
						i, level, s.Name, res.Verdict, want, oracle.Format(h), res.Anomalies)
				}
				if got {
					checkWitness(t, h, level, res)
				}
				counts[fmt.Sprintf("optional>0=%v", res.Counters["unknown_optional"] > 0)]++
			}
			counts[fmt.Sprintf("%s=%v", level, want)]++
		}
	}
	t.Logf("over %d histories: %v", n, counts)
}

func checkWith(t *testing.T, h *history.History, level history.Level, s strong.Strategy) *check.Result {
	t.Helper()
	saved := strong.Strategies
	strong.Strategies = []strong.Strategy{s}
	res, err := check.Check(context.Background(), h, level, check.Options{})
	strong.Strategies = saved
	require.NoError(t, err)
	return res
}

// TestManyOptionalUnknowns: histories beyond the oracle's size, with more
// than eight optional unknown-status transactions (the limit of the old
// subset search), agree with a reference that tries every subset of the
// unknown ones, each as a history where the subset committed and the rest
// aborted; the strategies agree with each other and never answer unknown.
func TestManyOptionalUnknowns(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	opts := unknownHeavy()
	opts.MinTxns, opts.Txns = 20, 20
	opts.PUnknown, opts.PNoise, opts.PSkipSession = 0.5, 0, 0.3
	strategies := []strong.Strategy{}
	for _, name := range []string{"veristrong", "no-2width", "lazy-gini"} {
		s, err := strong.Find(history.SER, name)
		require.NoError(t, err)
		strategies = append(strategies, s)
	}
	counts := map[string]int{}
	// Up to 6 satisfied and 6 violated at SER.
	for tried := 0; counts["histories"] < 12 && tried < 5000; tried++ {
		h := oracle.Generate(rng, opts)
		res := checkWith(t, h, history.SER, strategies[0])
		if res.Counters["unknown_optional"] <= 8 || numUnknown(h) > 11 || counts[res.Verdict.String()] >= 6 {
			continue
		}
		counts[res.Verdict.String()]++
		counts["histories"]++
		for _, level := range []history.Level{history.SER, history.SI} {
			want := subsetReference(t, h, level)
			for _, s := range strategies {
				res := checkWith(t, h, level, s)
				require.NotEqual(t, check.Unknown, res.Verdict)
				got := res.Verdict == check.Satisfied
				require.Equal(t, want, got, "%s, strategy %s (%d optional)\n%s", level, s.Name, res.Counters["unknown_optional"], oracle.Format(h))
				if got {
					checkWitness(t, h, level, res)
				}
			}
			counts[fmt.Sprintf("%s=%v", level, want)]++
		}
	}
	require.Equal(t, 12, counts["histories"], "too few histories with more than 8 optional transactions")
	t.Logf("%v", counts)
}

func numUnknown(h *history.History) int {
	n := 0
	for tx := range h.Txns {
		if h.Txns[tx].Status == history.Unknown {
			n++
		}
	}
	return n
}

// subsetReference decides level by trying the subsets of h's unknown
// transactions, each a history of plain committed and aborted ones.
func subsetReference(t *testing.T, h *history.History, level history.Level) bool {
	var unk []history.TxnID
	for tx := 1; tx < len(h.Txns); tx++ {
		if h.Txns[tx].Status == history.Unknown {
			unk = append(unk, history.TxnID(tx))
		}
	}
	for mask := range 1 << len(unk) {
		status := map[history.TxnID]history.Status{}
		for i, u := range unk {
			status[u] = history.Aborted
			if mask&(1<<i) != 0 {
				status[u] = history.Committed
			}
		}
		res, err := check.Check(context.Background(), withStatus(h, status), level, check.Options{})
		if err != nil {
			continue // nothing left that committed
		}
		require.NotEqual(t, check.Unknown, res.Verdict)
		if res.Verdict == check.Satisfied {
			return true
		}
	}
	return false
}

// withStatus rebuilds a generated history (plain reads and writes, T⊥
// writing 0) with the statuses status gives.
func withStatus(h *history.History, status map[history.TxnID]history.Status) *history.History {
	b := history.NewBuilder("withStatus", "oracle")
	b.SetInit(history.InitImplicit, 0)
	for k := range h.Keys {
		b.InitWrite(h.Key(history.KeyID(k)), 0)
	}
	for tx := 1; tx < len(h.Txns); tx++ {
		x := &h.Txns[tx]
		st, ok := status[history.TxnID(tx)]
		if !ok {
			st = x.Status
		}
		id := b.Begin(b.Session(h.Sessions[x.Session].ID), x.ID, st, history.Pos{})
		for _, op := range x.Ops {
			k, v := h.Key(op.Key), h.Value(op.Key, op.Value)
			if op.Kind.IsWrite() {
				b.Write(id, k, v)
			} else {
				b.Read(id, k, v)
			}
		}
	}
	return b.Finish()
}
