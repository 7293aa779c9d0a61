package viper

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/check"
	"github.com/hyperiso/hyperiso/history"
)

// describeRows is describe with each operation's provenance (insert,
// delete, a row of a select) and the predicate reads' ranges.
func describeRows(h *history.History) string {
	var sb strings.Builder
	sb.WriteString(describe(h))
	for _, s := range h.Selects {
		sb.WriteString(" select " + h.TxnString(s.Txn))
		sb.WriteString("[")
		for i, op := range s.Ops(h) {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(h.KeyString(op.Key) + "=" + h.ValueString(op.Key, op.Value))
		}
		sb.WriteString("]")
	}
	for t := range h.Txns {
		for _, op := range h.Txns[t].Ops {
			if op.Src == history.SrcInsert || op.Src == history.SrcDelete {
				sb.WriteString(" " + op.Src.String() + "(" + h.KeyString(op.Key) + ")")
			}
		}
	}
	return sb.String()
}

// TestRangeMapping: Viper's "i", "d" and "range" micro-operations, the
// dead flag and the extras ViperBench writes, as docs/formats.md says.
func TestRangeMapping(t *testing.T) {
	h, err := parse(map[string]string{
		"J0.log": `{"value": [["w", 3, 30, true]], "isInitial": true}` + "\n",
		"J1.log": `{"value": [["i", 1, 10, null, false, true], ["d", 3, 77, 30, false, true]]}` + "\n" +
			`{"value": [["i", 2, 20, 5, true, true, true, "i"], ["d", 4, 78, "nil", false, false, true], ["i", 5, 50, null, false, false]], "isFinal": false}` + "\n",
		"J2.log": `{"value": [["range", 0, 4, [{"id": 1, "sk": 1, "val": 10}], [{"id": 3, "sk": 3, "val": 77}]], ["r", 3, 77, true], ["range", "nil", null, [], [], true]]}` + "\n",
	}, Options{})
	require.NoError(t, err)
	require.NoError(t, h.CheckInvariants())
	got := describeRows(h)
	// T1 reads row 1 absent and inserts it, reads row 3 = 30 and deletes
	// it; T2 reads row 2 dead and inserts it, reads row 4 absent (a failed
	// delete writes nothing), reads row 5 absent (a failed insert is an
	// aborted write); T3's first range returns row 1 and finds 2, 3 and 4
	// absent (3 dead), its second covers every key and returns none.
	require.Contains(t, got, "S1: T2[r(1,nil) w(1,10) r(3,30) w(3,nil)] T3[r(2,nil) w(2,20) r(4,nil) r(5,nil)]; S2: T4[r(1,10) r(2,nil) r(3,nil) r(4,nil) r(3,nil) r(1,nil) r(2,nil) r(3,nil) r(4,nil) r(5,nil)]")
	require.Contains(t, got, "aborted[(5,50)]")
	require.Contains(t, got, " insert(1) delete(3) insert(2)")
	require.Len(t, h.Selects, 2)
	require.Equal(t, int64(0), h.Selects[0].Lo)
	require.Equal(t, int64(5), h.Selects[0].Hi)
}

// TestRangeErrors: a malformed range, insert or delete is an error naming
// the file, line and micro-operation; lenient drops it with a warning.
func TestRangeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"value": [["range", 1, 5, []]]}`, `micro-operation 1: ["range", key1, key2, liveRows, deadRows] has 5 elements`},
		{`{"value": [["range", "a", 5, [], []]]}`, `key1 "a": not an integer`},
		{`{"value": [["range", 1, 5, {}, []]]}`, `the live rows {} are not an array`},
		{`{"value": [["range", 1, 5, [{"id": 9, "val": 1}], []]]}`, `key 9 is outside the range [1, 5]`},
		{`{"value": [["range", 1, 5, [{"id": 2, "val": 1}], [{"id": 2, "val": 3}]]]}`, `key 2 is already a live row`},
		{`{"value": [["range", 1, 5, [{"id": 2, "value": 1}], []]]}`, `unknown field "value"`},
		{`{"value": [["range", 1, 5, [{"id": 2, "sk": 3, "val": 1}], []]]}`, `sk 3 is not the id 2`},
		{`{"value": [["range", 1, 5, [{"id": 2}], []]]}`, `no "val"`},
		{`{"value": [["range", 1, 5, [], [], 1]]}`, `the final-query flag 1`},
		{`{"value": [["i", 1, 2, null, false]]}`, `["i", key, value, readValue, isDead, succ] has 6 elements`},
		{`{"value": [["d", 1, 2, null, false, 1]]}`, `succ 1 is not true or false`},
		{`{"value": [["i", 1, 2, null, "no", true]]}`, `isDead "no" is not true or false`},
		{`{"value": [["i", 1, null, null, false, true]]}`, `value written null: not an integer`},
		{`{"value": [["append", 1, 2, true]]}`, `"append" operations (Viper's append workload) are not read`},
		{`{"value": [["w", 1, 2, true]], "isFinal": 3}`, `field "isFinal" is not true or false`},
	} {
		_, err := parse(map[string]string{"J1.log": c.in}, Options{})
		require.ErrorContains(t, err, c.want, c.in)
		require.ErrorContains(t, err, "J1.log:1:", c.in)
		h, err := parse(map[string]string{"J1.log": c.in}, Options{Lenient: true})
		require.NoError(t, err, c.in)
		require.NotEmpty(t, h.Warnings, c.in)
		require.NoError(t, h.CheckInvariants())
	}
}

// TestRangeHistoriesCheck: a small Viper range history that satisfies
// every level, and one with a phantom: T2's range returns row 1 from
// T1's insert but misses row 5, which T1 inserted too and T2 then reads.
// Violated from read atomic up, named a phantom, satisfied at RC and RR,
// which allow phantoms (docs/predicates.md).
func TestRangeHistoriesCheck(t *testing.T) {
	ok := map[string]string{
		"J0.log": `{"value": [["w", 3, 30, true]], "isInitial": true}` + "\n",
		"J1.log": `{"value": [["i", 1, 10, null, false, true], ["d", 3, 99, 30, false, true]]}` + "\n",
		"J2.log": `{"value": [["range", 0, 5, [{"id": 1, "sk": 1, "val": 10}], [{"id": 3, "sk": 3, "val": 99}]], ["r", 3, 99, true]]}` + "\n",
	}
	phantom := map[string]string{
		"J1.log": `{"value": [["i", 1, 10, null, false, true], ["i", 5, 50, null, false, true]]}` + "\n",
		"J2.log": `{"value": [["range", 0, 9, [{"id": 1, "sk": 1, "val": 10}], []], ["r", 5, 50, false]]}` + "\n",
	}
	// One session deletes row 1 twice (tombstones 100 and 200), then reads
	// it dead naming the first tombstone: a stale read by Viper's file,
	// but the model drops tombstones (docs/predicates.md, "Deleted rows
	// with identity"), so the read may be of the second delete.
	stale := map[string]string{
		"J1.log": `{"value": [["i", 1, 10, null, false, true]]}` + "\n" +
			`{"value": [["d", 1, 100, 10, false, true]]}` + "\n" +
			`{"value": [["i", 1, 20, 100, true, true]]}` + "\n" +
			`{"value": [["d", 1, 200, 20, false, true]]}` + "\n" +
			`{"value": [["r", 1, 100, true]]}` + "\n",
	}
	levels := []history.Level{history.RC, history.RA, history.CC, history.RR, history.PC, history.PSI, history.SI, history.SER}
	for _, c := range []struct {
		name string
		logs map[string]string
		want []string // per level: "" satisfied, else the first anomaly's type ("*": any)
	}{
		{"satisfied", ok, []string{"", "", "", "", "", "", "", ""}},
		{"phantom", phantom, []string{"", history.Phantom, history.Phantom, "", history.Phantom, history.Phantom, history.Phantom, history.Phantom}},
		{"stale tombstone", stale, []string{"", "", "", "", "", "", "", ""}},
	} {
		h, err := parse(c.logs, Options{})
		require.NoError(t, err)
		for i, l := range levels {
			res, err := check.Check(context.Background(), h, l, check.Options{})
			require.NoError(t, err, "%s at %v", c.name, l)
			if c.want[i] == "" {
				require.Equal(t, check.Satisfied, res.Verdict, "%s at %v: %v", c.name, l, res.Anomalies)
				continue
			}
			require.Equal(t, check.Violated, res.Verdict, "%s at %v", c.name, l)
			if c.want[i] != "*" {
				require.Equal(t, c.want[i], res.Anomalies[0].Type, "%s at %v: %s", c.name, l, res.Anomalies[0].Description)
			}
		}
	}
}
