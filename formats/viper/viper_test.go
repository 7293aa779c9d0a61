package viper

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/formats/jsonl"
	"github.com/hyperiso/hyperiso/history"
)

func parse(logs map[string]string, opt Options) (*history.History, error) {
	var ls []Log
	for name, data := range logs {
		ls = append(ls, Log{Name: name, Data: strings.NewReader(data)})
	}
	return ParseLogs("mem", ls, opt)
}

// describe renders sessions, transactions, operations, T⊥ and aborted
// writes for comparison.
func describe(h *history.History) string {
	var sb strings.Builder
	val := func(k history.KeyID, v history.ValueID) string {
		if x := h.Value(k, v); x != history.EmptyList {
			return fmt.Sprint(x)
		}
		return "nil"
	}
	for _, s := range h.Sessions {
		fmt.Fprintf(&sb, "S%d:", s.ID)
		for _, t := range s.Txns {
			fmt.Fprintf(&sb, " T%d[", h.Txns[t].ID)
			for i, op := range h.Txns[t].Ops {
				if i > 0 {
					sb.WriteByte(' ')
				}
				fmt.Fprintf(&sb, "%s(%d,%s)", op.Kind, h.Key(op.Key), val(op.Key, op.Value))
			}
			sb.WriteString("]")
		}
		sb.WriteString("; ")
	}
	fmt.Fprintf(&sb, "init %v T%d[", h.InitKind, h.Txns[0].ID)
	for i, op := range h.Txns[0].Ops {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "w(%d,%s)", h.Key(op.Key), val(op.Key, op.Value))
	}
	sb.WriteString("] aborted[")
	for _, v := range h.AbortedWrites {
		fmt.Fprintf(&sb, "(%d,%s)", h.Key(v.Key), val(v.Key, v.Value))
	}
	return sb.String() + "]"
}

// TestMapping: sessions in numeric order of J<n>, transactions numbered in
// that order, null and "nil" reads of the initial state, a failed write an
// aborted write, a read flagged dead a read of an absent row.
func TestMapping(t *testing.T) {
	h, err := parse(map[string]string{
		"d/J10.log": `{"value": [["w", 1, 5, true], ["w", 2, 6, false]]}` + "\n" + `{"value": [["r", 1, 5, true]]}` + "\n",
		"d/J9.log":  `{"value": [["r", 1, null, false], ["r", 2, "nil", false]]}`,
	}, Options{})
	require.NoError(t, err)
	require.Equal(t, "S9: T1[r(1,nil) r(2,nil)]; S10: T2[w(1,5)] T3[r(1,nil)]; init implicit T0[w(1,nil) w(2,nil)] aborted[(2,6)]", describe(h))
	for tx := 1; tx < len(h.Txns); tx++ {
		require.Equal(t, history.Committed, h.Txns[tx].Status)
	}
}

// TestInitialTransaction: "isInitial": true alone in its log is T⊥.
func TestInitialTransaction(t *testing.T) {
	h, err := parse(map[string]string{
		"J0.log": `{"value": [["w", 1, 0, true], ["w", 2, 0, true]], "isInitial": true}` + "\n",
		"J1.log": `{"value": [["r", 1, 0, false], ["r", 3, null, false]]}` + "\n",
	}, Options{})
	require.NoError(t, err)
	require.Equal(t, "S1: T2[r(1,0) r(3,nil)]; init explicit T1[w(1,0) w(2,0) w(3,nil)] aborted[]", describe(h))
}

// TestErrors: each malformed input fails in strict mode naming the file,
// line and problem, and is skipped with a warning in lenient mode.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"value": [["w", 1, 2, true]]}` + "\n\n", "J1.log:2: blank line"},
		{`{"value": [["w", 1, 2, true]]`, "J1.log:1: not a transaction"},
		{`{"vals": []}`, `J1.log:1: unknown field "vals"`},
		{`{"isInitial": false}`, `J1.log:1: no "value" field`},
		{`{"value": [["x", 1, 2, true]]}`, `J1.log:1: micro-operation 1: unknown operation "x"`},
		{`{"value": [["w", 1, 2, true], ["append", 1, 5, true]]}`, `J1.log:1: micro-operation 2: "append" operations`},
		{`{"value": [["w", 1, 2]]}`, "J1.log:1: micro-operation 1: [\"w\", key, value, flag] has 4 elements, this one 3"},
		{`{"value": [["w", "k", 2, true]]}`, `J1.log:1: micro-operation 1: key "k": not an integer`},
		{`{"value": [["w", 1, 1e3, true]]}`, `micro-operation 1: value written 1e3: not an integer`},
		{`{"value": [["r", 1, 99999999999999999999, true]]}`, `does not fit in 64 bits`},
		{`{"value": [["r", 1, 2, 1]]}`, `micro-operation 1: flag 1 is not true or false`},
		{`{"value": [3]}`, `micro-operation 1: 3 is not an array`},
		{`{"value": []} {"value": []}`, `text after the transaction`},
		{"", "no transactions"},
	} {
		_, err := parse(map[string]string{"J1.log": c.in}, Options{})
		require.ErrorContains(t, err, c.want, c.in)
		h, err := parse(map[string]string{"J1.log": c.in}, Options{Lenient: true})
		require.NoError(t, err, c.in)
		require.NotEmpty(t, h.Warnings, c.in)
		require.NoError(t, h.CheckInvariants())
	}
	_, err := parse(map[string]string{
		"J1.log": `{"value": [["w", 1, 0, true]], "isInitial": true}` + "\n" + `{"value": []}` + "\n",
	}, Options{})
	require.ErrorContains(t, err, "J1.log:1: the initial transaction (\"isInitial\": true) must be alone in its log")
	_, err = parse(map[string]string{
		"J1.log": `{"value": [["w", 1, 0, true]], "isInitial": true}`,
		"J2.log": `{"value": [["w", 2, 0, true]], "isInitial": true}`,
	}, Options{})
	require.ErrorContains(t, err, "J2.log:1: a second initial transaction (the first is at J1.log:1)")
}

// TestReadDirectory: Read takes the J<n>.log files of a directory and
// nothing else, or one log file.
func TestReadDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "J3.log"), []byte(`{"value": [["w", 1, 2, true]]}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T3.log"), []byte("S...."), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	h, err := Read(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, "S3: T1[w(1,2)]; init implicit T0[w(1,nil)] aborted[]", describe(h))
	h, err = Read(filepath.Join(dir, "J3.log"), Options{})
	require.NoError(t, err)
	require.Len(t, h.Txns, 2)
	_, err = Read(t.TempDir(), Options{})
	require.ErrorContains(t, err, "no J<n>.log file")
}

// roundTrip: a history read survives the JSONL round trip.
func roundTrip(t *testing.T, h *history.History) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jsonl.Write(&buf, h))
	h2, err := jsonl.Parse(bytes.NewReader(buf.Bytes()), "rt.jsonl", jsonl.Options{})
	require.NoError(t, err)
	require.Equal(t, describe(h), describe(h2))
}

// TestFieldNamesStrict: a field name with one corrupted byte (issue 26:
// "isInitial" changed so that the initial transaction became an ordinary
// one and a violated history SATISFIED), a case-folded one, one with
// invalid UTF-8, a duplicate or a non-boolean flag is an error naming the
// file and line; --lenient ignores an unknown field with a warning and
// counts it as dropped.
func TestFieldNamesStrict(t *testing.T) {
	good := `{"value": [["w", 1, 5, true]], "isInitial": true}`
	_, err := parse(map[string]string{"J0.log": good + "\n", "J1.log": `{"value": [["r", 1, 5, false]]}` + "\n"}, Options{})
	require.NoError(t, err)
	for _, bad := range []string{
		`{"value": [["w", 1, 5, true]], "isInitiak": true}`,
		`{"value": [["w", 1, 5, true]], "IsInitial": true}`,
		`{"value": [["w", 1, 5, true]], "isinitial": true}`,
		`{"value": [["w", 1, 5, true]], "isInitia` + "\xff" + `": true}`,
		`{"Value": [["w", 1, 5, true]], "isInitial": true}`,
		`{"value": [["w", 1, 5, true]], "isInitial": true, "isInitial": true}`,
		`{"value": [["w", 1, 5, true]], "isInitial": 1}`,
		`{"value": [["w", 1, 5, true]], "isInitial": null}`,
		`{"value": null}`,
	} {
		_, err := parse(map[string]string{"J0.log": "{\"value\": []}\n" + bad + "\n"}, Options{})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "J0.log:2", bad)
	}
	h, err := parse(map[string]string{"J0.log": `{"value": [["w", 1, 5, true]], "isInitiak": true}` + "\n"}, Options{Lenient: true})
	require.NoError(t, err)
	require.Equal(t, 1, h.Dropped.Other)
	require.NotEmpty(t, h.Warnings)
}

// TestWriteSkipsEmptySessions: a session without transactions gets no log
// (issue 26: its empty J0.log made the directory read back as Cobra).
func TestWriteSkipsEmptySessions(t *testing.T) {
	b := history.NewBuilder("mem", "test")
	b.Session(0)
	t1 := b.Begin(b.Session(1), 1, history.Committed, history.Pos{})
	b.Write(t1, 1, 5)
	b.InitAllKeys(history.EmptyList)
	dir := filepath.Join(t.TempDir(), "v")
	require.NoError(t, Write(dir, b.Finish()))
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "J1.log")}, logs)
}
