package robust

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// historyOf writes the oracle's execution as a history: transaction i
// (id i+1) writes i+1 to each key it writes, reads what its writer wrote
// (0 for T⊥), declares its level, and the version order is arbitration's,
// stated outright, so that the history pins the execution's dependencies.
// It goes through JSON Lines and back, as a counterexample file would.
func historyOf(t *testing.T, txs []otx, nkeys int, ex *oexec) *history.History {
	b := history.NewBuilder("oracle", "jsonl")
	b.SetInit(history.InitImplicit, 0)
	b.InitAllKeys(0)
	for i, tx := range txs {
		sess := int64(tx.sess)
		if tx.sess < 0 {
			sess = int64(100 + i)
		}
		id := b.Begin(b.Session(sess), int64(i+1), history.Committed, history.Pos{})
		for x := range nkeys {
			if tx.reads&(1<<x) != 0 {
				b.Read(id, int64(x), int64(ex.readFrom[i][x]+1))
			}
		}
		for x := range nkeys {
			if tx.writes&(1<<x) != 0 {
				b.Write(id, int64(x), int64(i+1))
			}
		}
		b.SetLevel(id, tx.level)
	}
	for x := range nkeys {
		var ws []int
		for _, i := range ex.order {
			if txs[i].writes&(1<<x) != 0 {
				ws = append(ws, i)
			}
		}
		for j := 1; j < len(ws); j++ {
			b.VersionHint(int64(x), int64(ws[j-1]+1), int64(ws[j]+1))
		}
	}
	var buf bytes.Buffer
	require.NoError(t, jsonl.Write(&buf, b.Finish()))
	h, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "oracle.jsonl", jsonl.Options{})
	require.NoError(t, err, buf.String())
	return h
}

// TestRobustOracleAgreesWithCheck: every non-serializable execution the
// oracle finds, written as a history with declared levels, satisfies
// --level mixed and violates ser in hyperiso's own checker.
func TestRobustOracleAgreesWithCheck(t *testing.T) {
	n := cases(t, 1000)
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	for found := 0; found < n; {
		txs, nkeys := randomWorkload(r)
		ex, bad := oracleBad(txs, nkeys)
		if !bad {
			continue
		}
		found++
		h := historyOf(t, txs, nkeys, ex)
		var buf bytes.Buffer
		require.NoError(t, jsonl.Write(&buf, h))
		mixed, err := check.Check(ctx, h, history.Mixed, check.Options{})
		require.NoError(t, err)
		require.Equal(t, check.Satisfied, mixed.Verdict, "mixed: %s\n%s", fmt.Sprint(mixed.Anomalies), buf.String())
		ser, err := check.Check(ctx, h, history.SER, check.Options{})
		require.NoError(t, err)
		require.Equal(t, check.Violated, ser.Verdict, "ser:\n%s", buf.String())
	}
}

// TestPaperRulesMissSessions pins the case that made session order part
// of the analysis: under the paper's rules T3, reading one key, runs at
// RA, and after T2 in its session it reads the initial value T0
// overwrote, though T2 saw T0's write: no serial order that keeps session
// order explains it. hyperiso's checker agrees; Allocate gives T3 PC.
func TestRobustPaperRulesMissSessions(t *testing.T) {
	const x = 1
	txs := []otx{
		{reads: x, writes: x, sess: -1},
		{reads: x, writes: x, sess: -1},
		{reads: x, sess: 1, idx: 0},
		{reads: x, sess: 1, idx: 1},
	}
	paper := []history.Level{history.PSI, history.PSI, history.RA, history.RA}
	ex, bad := oracleBad(withLevels(txs, paper), 1)
	require.True(t, bad)
	h := historyOf(t, withLevels(txs, paper), 1, ex)
	mixed, err := check.Check(context.Background(), h, history.Mixed, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Satisfied, mixed.Verdict)
	ser, err := check.Check(context.Background(), h, history.SER, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Violated, ser.Verdict)

	w := workloadOf(txs, 1)
	a := Allocate(w)
	require.Equal(t, []history.Level{history.PSI, history.PSI, history.RA, history.PC}, a.Levels)
	_, bad = oracleBad(withLevels(txs, a.Levels), 1)
	require.False(t, bad)
	rep, err := Check(w, CheckOptions{Levels: paper})
	require.NoError(t, err)
	require.False(t, rep.Robust)
	require.True(t, slices.Contains(rep.Culprits, 3))
}
