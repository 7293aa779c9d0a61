package explain

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// A list read is kept in a sub-history only with every element's appender:
// cutting one out would turn the counterexample into a garbage read the
// whole history does not have.
func TestListCounterexampleKeepsAppenders(t *testing.T) {
	h, err := jsonl.Parse(strings.NewReader(`{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["append","x",1],["append","y",1]]}
{"session":2,"id":2,"ops":[["append","x",2]]}
{"session":3,"id":3,"ops":[["r","x",[1,2]],["r","y",[]]]}
`), "fractured.jsonl", jsonl.Options{})
	require.NoError(t, err)
	for _, l := range []history.Level{history.RC, history.RA, history.CC, history.SER} {
		rep, err := Explain(context.Background(), h, l, Options{})
		require.NoError(t, err)
		require.Len(t, rep.Explanation.Counterexamples, 1, "%v", l)
		ce := rep.Explanation.Counterexamples[0]
		require.NotEqual(t, "garbage-read", ce.Type, "%v", l)
		require.Equal(t, 3, ce.Size, "%v: %s", l, ce.Summary)
	}
}

// An anomaly that names no transaction (a refutation without a cycle to
// show) is explained from the whole history, not refused.
func TestExplainAnomalyWithoutTransactions(t *testing.T) {
	h, err := jsonl.Parse(strings.NewReader(`{"hyperiso":1,"init":"zero"}
{"session":1,"id":1,"ops":[["r",1,0],["w",2,1]]}
{"session":2,"id":2,"ops":[["r",2,0],["w",1,1]]}
{"session":3,"id":3,"ops":[["w",3,1]]}
`), "skew.jsonl", jsonl.Options{})
	require.NoError(t, err)
	res, err := check.Check(context.Background(), h, history.SER, check.Options{})
	require.NoError(t, err)
	require.Equal(t, check.Violated, res.Verdict)
	res.Anomalies[0].Txns, res.Anomalies[0].Edges = nil, nil
	ex, err := ExplainResult(context.Background(), h, history.SER, res, Options{})
	require.NoError(t, err)
	require.Len(t, ex.Counterexamples, 1)
	require.Equal(t, 2, ex.Counterexamples[0].Size, "write skew needs T1 and T2 only")
}
