package jsonl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hyperiso/hyperiso/history"
)

// TestLenientCountsWhatItDrops: each kind of line or field lenient reading
// skips is counted as a transaction and its operations when the line was
// read whole, and as another input item when it was not.
func TestLenientCountsWhatItDrops(t *testing.T) {
	const txn = `{"session": 1, "id": 1, "ops": [["w", 1, 1]]}` + "\n"
	for _, c := range []struct {
		name, data string
		want       history.Dropped
	}{
		{"clean", txn, history.Dropped{}},
		{"not JSON", txn + "garbage\n", history.Dropped{Other: 1}},
		{"half a transaction", txn + `{"session": 1, "id": 2, "ops": [["w", 1, 2]]` + "\n", history.Dropped{Other: 1}},
		{"duplicate id", txn + `{"session": 2, "id": 1, "ops": [["r", 1, 1], ["w", 1, 2]]}` + "\n", history.Dropped{Txns: 1, Ops: 2}},
		{"no session", txn + `{"id": 2, "ops": [["w", 2, 1], ["w", 3, 1], ["w", 4, 1]]}` + "\n", history.Dropped{Txns: 1, Ops: 3}},
		{"late header", txn + `{"hyperiso": 1, "init": "zero"}` + "\n", history.Dropped{Other: 1}},
		{"late init line", txn + `{"init": true, "ops": [["w", 5, 0]]}` + "\n", history.Dropped{Txns: 1, Ops: 1}},
		{"unknown field", `{"session": 1, "id": 1, "stauts": "aborted", "ops": [["w", 1, 1]]}` + "\n", history.Dropped{Other: 1}},
		{"duplicate field", `{"session": 1, "id": 1, "ops": [["w", 1, 1]], "ops": []}` + "\n", history.Dropped{Other: 1}},
		{"ops on an aborted_writes line", txn + `{"aborted_writes": [[1, 9]], "ops": [["w", 2, 2], ["w", 3, 3]]}` + "\n", history.Dropped{Ops: 2}},
		{"aborted_writes in the header", `{"hyperiso": 1, "init": "zero", "aborted_writes": [[1, 9]]}` + "\n" + txn, history.Dropped{Ops: 1}},
		{"both kinds", txn + "garbage\n" + `{"session": 2, "id": 1, "ops": []}` + "\n", history.Dropped{Txns: 1, Other: 1}},
	} {
		h, err := Parse(strings.NewReader(c.data), "mem.jsonl", Options{Lenient: true})
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, h.Dropped, c.name)
		if c.want.Any() {
			require.NotEmpty(t, h.Warnings, c.name)
			_, err := Parse(strings.NewReader(c.data), "mem.jsonl", Options{})
			require.Error(t, err, c.name)
		}
	}
}

// What a lenient reading dropped survives conversion: the converted file
// says so too.
func TestDroppedSurvivesConversion(t *testing.T) {
	src := "{\"session\":1,\"ops\":[[\"w\",1,1]]}\nnot json\n{\"session\":2,\"ops\":[[\"r\",1,1]]}\n"
	h, err := Parse(strings.NewReader(src), "in.jsonl", Options{Lenient: true})
	require.NoError(t, err)
	require.True(t, h.Dropped.Any())
	h2, out, err := roundTrip(h)
	require.NoError(t, err)
	require.Contains(t, out, `"dropped":[`)
	require.Equal(t, h.Dropped, h2.Dropped)
}
