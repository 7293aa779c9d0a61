package collect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/collect"
	"github.com/hyperiso/hyperiso/collect/internal/dbtest"
	"github.com/hyperiso/hyperiso/collect/memstore"
	"github.com/hyperiso/hyperiso/collect/workload"
)

// replayRows runs one session's planned transactions against a map from
// key to value, one after another, and writes each as the JSONL operations
// it must be recorded as (docs/predicates.md): the oracle of the recorder,
// defined from what the operations mean, not from how a store runs them.
func replayRows(w *workload.Workload) [][]any {
	rows := map[int64]int64{}
	g := w.Session(0)
	var out [][]any
	for range w.TxnsPerSession() {
		var ops []any
		for _, op := range g.Next().Ops {
			switch op.Kind {
			case workload.ReadRow:
				if v, ok := rows[op.Key]; ok {
					ops = append(ops, []any{"r", op.Key, v})
				} else {
					ops = append(ops, []any{"r", op.Key, nil})
				}
			case workload.Select:
				found := []any{}
				for k := op.Key; k < op.To; k++ {
					if v, ok := rows[k]; ok {
						found = append(found, []any{k, v})
					}
				}
				ops = append(ops, []any{"select", map[string]any{"keys": []any{op.Key, op.To}}, found})
			case workload.Insert:
				rows[op.Key] = op.Value
				ops = append(ops, []any{"insert", op.Key, op.Value})
			case workload.Delete:
				delete(rows, op.Key)
				ops = append(ops, []any{"delete", op.Key})
			case workload.Move:
				_, from := rows[op.Key]
				_, to := rows[op.To]
				if from && !to {
					delete(rows, op.Key)
					rows[op.To] = op.Value
					ops = append(ops, []any{"delete", op.Key}, []any{"insert", op.To, op.Value})
				}
			}
		}
		out = append(out, ops)
	}
	return out
}

// TestRowsRecordedAsTheyMean: one session on the memory store, so that
// transactions run one after another, streamed as JSONL: every
// transaction's operations are those the replay on a map gives, a range
// read listing exactly the live rows of its range.
func TestRowsRecordedAsTheyMean(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		w := dbtest.Workload(t, "predicate", func(c *workload.Config) { c.Sessions, c.Txns, c.Keys, c.Seed = 1, 60, 6, seed })
		var out bytes.Buffer
		rec := collect.NewRecorder(&out)
		_, sum, err := collect.Run(context.Background(), memstore.New(memstore.Options{Seed: seed}), w,
			collect.Options{Isolation: collect.Serializable, Sink: rec})
		require.NoError(t, err)
		require.NoError(t, rec.Close())
		require.Equal(t, sum.Planned, sum.Committed)
		want := replayRows(w)
		var got [][]any
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var txn struct{ Ops []any }
			require.NoError(t, json.Unmarshal([]byte(line), &txn))
			if strings.HasPrefix(line, `{"session"`) {
				got = append(got, txn.Ops)
			}
		}
		require.Len(t, got, len(want))
		for i := range want {
			// Compare through JSON: numbers and nulls alike.
			w, err := json.Marshal(want[i])
			require.NoError(t, err)
			var norm []any
			require.NoError(t, json.Unmarshal(w, &norm))
			if norm == nil {
				norm = []any{}
			}
			require.True(t, slices.EqualFunc(norm, got[i], func(a, b any) bool {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return bytes.Equal(x, y)
			}), "seed %d, transaction %d:\nwant %s\ngot  %v", seed, i+1, w, got[i])
		}
	}
}
