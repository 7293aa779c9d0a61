package workload_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/collect/workload"
	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

// TestWriteSerial: the streamed history is deterministic, holds every
// planned transaction with its keys and written values, and satisfies
// every level, with unique and with repeated values.
func TestWriteSerial(t *testing.T) {
	for _, dup := range []float64{0, 0.5} {
		c, err := workload.Defaults("general")
		require.NoError(t, err)
		c.Sessions, c.Txns, c.Ops, c.Keys, c.DupKeys, c.ValueSpace, c.RollbackRate = 6, 30, 6, 40, dup, 5, 0.1
		w, err := workload.New("general", c)
		require.NoError(t, err)
		var a, b bytes.Buffer
		require.NoError(t, w.WriteSerial(context.Background(), &a, map[string]string{"k": "v"}))
		require.NoError(t, w.WriteSerial(context.Background(), &b, map[string]string{"k": "v"}))
		require.Equal(t, a.String(), b.String(), "deterministic")

		h, err := jsonl.Parse(bytes.NewReader(a.Bytes()), "serial", jsonl.Options{})
		require.NoError(t, err)
		require.Equal(t, "v", h.Meta["k"])
		st := h.Stats()
		require.Equal(t, 6*30, st.Transactions)
		require.Positive(t, st.Aborted)
		for s := range c.Sessions {
			g := w.Session(s)
			require.Equal(t, int64(s)+1, h.Sessions[s].ID)
			txns := h.Sessions[s].Txns
			require.Len(t, txns, c.Txns)
			for _, id := range txns {
				plan, got := g.Next(), &h.Txns[id]
				require.Equal(t, plan.Rollback, got.Status == history.Aborted)
				require.Len(t, got.Ops, len(plan.Ops))
				for i, op := range plan.Ops {
					require.Equal(t, op.Key, h.Key(got.Ops[i].Key))
					if op.Kind == workload.Write {
						require.Equal(t, op.Value, h.Value(got.Ops[i].Key, got.Ops[i].Value))
					}
				}
			}
		}
		for _, lv := range []history.Level{history.SER, history.SI, history.CC, history.RA, history.RC} {
			res, err := check.Check(context.Background(), h, lv, check.Options{})
			require.NoError(t, err)
			require.Equal(t, check.Satisfied, res.Verdict, "%s, dup-keys %g: %s", lv, dup, res.Reason)
		}
	}
}

func TestWriteSerialStops(t *testing.T) {
	c, err := workload.Defaults("general")
	require.NoError(t, err)
	c.Txns = 5000
	w, err := workload.New("general", c)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	require.ErrorIs(t, w.WriteSerial(ctx, &out, nil), context.Canceled)
}

// TestWriteSerialAppend: the append workload's serial history holds its
// appends and whole-list reads, and satisfies every level.
func TestWriteSerialAppend(t *testing.T) {
	c, err := workload.Defaults("append")
	require.NoError(t, err)
	c.Sessions, c.Txns, c.Keys, c.RollbackRate = 5, 30, 4, 0.1
	w, err := workload.New("append", c)
	require.NoError(t, err)
	require.True(t, w.Lists())
	var out bytes.Buffer
	require.NoError(t, w.WriteSerial(context.Background(), &out, nil))
	h, err := jsonl.Parse(bytes.NewReader(out.Bytes()), "serial", jsonl.Options{})
	require.NoError(t, err)
	require.True(t, h.HasLists())
	longest := 0
	for t := range h.Txns {
		for _, op := range h.Txns[t].Ops {
			if op.Kind == history.OpReadList {
				longest = max(longest, len(h.List(op)))
			}
		}
	}
	require.Greater(t, longest, 3, "lists grow")
	for _, lv := range []history.Level{history.SER, history.SI, history.RC} {
		res, err := check.Check(context.Background(), h, lv, check.Options{})
		require.NoError(t, err)
		require.Equal(t, check.Satisfied, res.Verdict, "%s: %s", lv, res.Reason)
	}
}
